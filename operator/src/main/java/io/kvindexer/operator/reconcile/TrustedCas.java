package io.kvindexer.operator.reconcile;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * The CAs the operator trusts for each replica: the current {@code ca.crt} of the certificate Secret the replica's
 * pod mounts, and every {@code ca.crt} that Secret held before while this replica was already running. A CA
 * replaced mid-life (the namespace's {@code kv-indexer-ca} renewed or replaced, another issuer) reaches each replica
 * only when its mounted copy follows and the replica reloads its files, or it restarts: until then it serves a
 * certificate of the former CA, and trusting the current one alone would leave it unmanaged. A replica whose
 * incarnation ({@link IndexerReplica#incarnation}: pod uid, IP, container restarts) was first seen after the change
 * started with the new content, and is trusted on the current CA only. What {@code ca.crt} holds is trusted whole,
 * several certificates included (a bundle with the old and the new CA, as cert-manager's rotation can write).
 *
 * <p>In memory only: an operator started during a rotation knows the current {@code ca.crt} alone. Forgotten with
 * what it is about ({@link #retain}): a former CA once no replica it was kept for runs, a Secret once no KvIndexer
 * names it and no replica pod mounts it.
 */
public final class TrustedCas {
    /** A CA the Secret held before, and the replica incarnations that were running while it did. */
    private record Former(String pem, Set<String> incarnations) {}

    /** One Secret's current {@code ca.crt} (stripped) and what it held before, oldest first. */
    private record Seen(String current, List<Former> formers) {}

    /** {@code namespace/secret} → what was seen of it. */
    private final Map<String, Seen> bySecret = new ConcurrentHashMap<>();

    /**
     * Notes that {@code secret} holds {@code ca} now, with {@code running} the incarnations of the replicas that
     * mount it, as the caller sees them: if it held another CA before, that one stays trusted for them.
     */
    public void observe(String secret, String ca, Collection<String> running) {
        if (ca == null) {
            return;
        }
        String now = ca.strip();
        bySecret.compute(secret, (k, seen) -> {
            if (seen == null) {
                return new Seen(now, List.of());
            }
            if (seen.current().equals(now)) {
                return seen;
            }
            List<Former> formers = new ArrayList<>();
            for (Former f : seen.formers()) {
                if (!f.pem().equals(now)) { // a CA back again is current, not former
                    formers.add(f);
                }
            }
            formers.add(new Former(seen.current(), Set.copyOf(running)));
            return new Seen(now, List.copyOf(formers));
        });
    }

    /**
     * The PEM text to trust for the replica {@code incarnation} whose pod mounts {@code secret}: {@code ca}, then
     * each former CA kept for that incarnation.
     */
    public String trusted(String secret, String ca, String incarnation) {
        Seen seen = bySecret.get(secret);
        if (ca == null || seen == null || !seen.current().equals(ca.strip())) {
            return ca;
        }
        Set<String> pems = new LinkedHashSet<>();
        pems.add(seen.current());
        seen.formers().stream()
                .filter(f -> f.incarnations().contains(incarnation))
                .forEach(f -> pems.add(f.pem()));
        return pems.size() == 1 ? ca : String.join("\n", pems) + "\n";
    }

    /**
     * Drops the incarnations not {@code running} any more (a former CA goes with the last of them) and the Secrets
     * not {@code wanted} ({@code namespace/secret}).
     */
    public void retain(Predicate<String> wanted, Set<String> running) {
        bySecret.keySet().removeIf(wanted.negate());
        bySecret.replaceAll((k, seen) -> {
            List<Former> formers = new ArrayList<>();
            for (Former f : seen.formers()) {
                Set<String> left = new HashSet<>(f.incarnations());
                left.retainAll(running);
                if (!left.isEmpty()) {
                    formers.add(new Former(f.pem(), Set.copyOf(left)));
                }
            }
            return Objects.equals(formers, seen.formers()) ? seen : new Seen(seen.current(), List.copyOf(formers));
        });
    }

    /** Secrets remembered, and former CAs kept: for tests. */
    int size() {
        return bySecret.size()
                + bySecret.values().stream().mapToInt(s -> s.formers().size()).sum();
    }
}

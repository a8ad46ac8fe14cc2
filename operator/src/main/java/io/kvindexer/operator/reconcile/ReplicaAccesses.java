package io.kvindexer.operator.reconcile;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kvindexer.operator.client.ReplicaAccess;
import io.kvindexer.operator.common.IndexerSecurity;
import io.kvindexer.operator.common.ServedAs;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * How the operator reaches a KvIndexer's replicas, read from the Secrets they mount: the token of
 * {@code <name>-auth} and the {@code ca.crt} of {@code <name>-tls}. With authentication off, the operator's own
 * token (its environment, the namespace-wide {@code kv-indexer-auth} of earlier versions) is sent, if any.
 */
public final class ReplicaAccesses {

    private ReplicaAccesses() {}

    /**
     * How to reach each of {@code replicas} (pod name → access): as its own pod serves ({@link ServedAs}), so that
     * while a change of {@code spec.security} rolls the pods one at a time, those not restarted yet are still called
     * as before (http or https, with or without the token) and stay managed however long the rollout takes; a pod
     * that does not say is reached as the spec says. Each Secret is read once.
     */
    public static Map<String, ReplicaAccess> byReplica(
            KubernetesClient client, KvIndexer kvi, Collection<IndexerReplica> replicas) {
        return byReplica(client, kvi, replicas, new TrustedCas());
    }

    /**
     * As above, each replica with TLS trusting what {@code cas} keeps for it: the current {@code ca.crt} of the
     * Secret its pod mounts, and the ones that Secret held before while this replica was running already.
     */
    public static Map<String, ReplicaAccess> byReplica(
            KubernetesClient client, KvIndexer kvi, Collection<IndexerReplica> replicas, TrustedCas cas) {
        String ns = kvi.getMetadata().getNamespace();
        String key = ns + "/" + kvi.getMetadata().getName();
        Map<String, Optional<Secret>> secrets = new HashMap<>();
        Function<String, Secret> secret = name -> name == null
                ? null
                : secrets.computeIfAbsent(
                                name,
                                n -> Optional.ofNullable(client.secrets()
                                        .inNamespace(ns)
                                        .withName(n)
                                        .get()))
                        .orElse(null);
        Map<String, List<String>> mounting = new HashMap<>(); // certificate Secret → incarnations of its replicas
        replicas.stream()
                .filter(r -> r.served() != null && r.served().tls())
                .forEach(r -> mounting.computeIfAbsent(r.served().tlsSecret(), n -> new ArrayList<>())
                        .add(r.incarnation()));
        mounting.forEach((name, running) ->
                cas.observe(ns + "/" + name, value(secret.apply(name), IndexerSecurity.CA_KEY), running));
        ReplicaAccess fromSpec = null;
        Map<String, ReplicaAccess> out = new HashMap<>();
        for (IndexerReplica r : replicas) {
            ServedAs s = r.served();
            if (s == null) {
                fromSpec = fromSpec != null ? fromSpec : read(client, kvi);
                out.put(r.pod(), fromSpec);
                continue;
            }
            String token = s.auth() ? value(secret.apply(s.tokenSecret()), IndexerSecurity.TOKEN_KEY) : null;
            String ca = s.tls()
                    ? cas.trusted(
                            ns + "/" + s.tlsSecret(),
                            value(secret.apply(s.tlsSecret()), IndexerSecurity.CA_KEY),
                            r.incarnation())
                    : null;
            out.put(r.pod(), new ReplicaAccess(key, s.scheme(), token == null ? null : token.strip(), ca));
        }
        return out;
    }

    public static ReplicaAccess read(KubernetesClient client, KvIndexer kvi) {
        String ns = kvi.getMetadata().getNamespace();
        String token = IndexerSecurity.authEnabled(kvi)
                ? value(client, ns, IndexerSecurity.tokenSecret(kvi), IndexerSecurity.TOKEN_KEY)
                : null;
        String ca = IndexerSecurity.tlsEnabled(kvi)
                ? value(client, ns, IndexerSecurity.tlsSecret(kvi), IndexerSecurity.CA_KEY)
                : null;
        return new ReplicaAccess(
                ns + "/" + kvi.getMetadata().getName(),
                IndexerSecurity.scheme(kvi),
                token == null ? null : token.strip(),
                ca);
    }

    private static String value(KubernetesClient client, String ns, String secret, String key) {
        return value(client.secrets().inNamespace(ns).withName(secret).get(), key);
    }

    /** A Secret's value as text (from {@code data}, or {@code stringData} as the mock API server keeps it). */
    public static String value(Secret secret, String key) {
        if (secret == null) {
            return null;
        }
        Map<String, String> data = secret.getData();
        if (data != null && data.get(key) != null) {
            return new String(Base64.getDecoder().decode(data.get(key)), StandardCharsets.UTF_8);
        }
        Map<String, String> plain = secret.getStringData();
        return plain == null ? null : plain.get(key);
    }
}

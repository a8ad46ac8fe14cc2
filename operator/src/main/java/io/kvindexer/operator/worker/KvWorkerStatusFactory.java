package io.kvindexer.operator.worker;

import static io.kvindexer.operator.reconcile.StatusUpdates.generation;
import static io.kvindexer.operator.reconcile.StatusUpdates.statusOnly;

import io.fabric8.kubernetes.api.model.Condition;
import io.kvindexer.operator.crd.v1alpha1.Conditions;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerStatus;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerStatus.PodRegistration;
import io.kvindexer.operator.reconcile.SpecStatuses;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/** Builds the status patch of a KvWorker: a fresh object holding only name, namespace and status. */
public final class KvWorkerStatusFactory implements SpecStatuses<KvWorker> {
    private static final int MAX_NOT_EXACT_SHOWN = 5;
    private final Clock clock;

    public KvWorkerStatusFactory(Clock clock) {
        this.clock = clock;
    }

    /**
     * @param desired  the engine pods that should be registered
     * @param outcomes one per replica the operator registers with (Ready replicas)
     */
    public KvWorker status(KvWorker worker, DesiredRegistrations desired, List<ReplicaOutcome> outcomes) {
        return status(worker, desired, outcomes, List.of());
    }

    /**
     * As above, with {@code former}: one outcome per replica of another KvIndexer (the one {@code spec.indexerRef}
     * named before) from which this KvWorker's engines were to be removed. A replica that may still hold an engine
     * stays in its {@code registeredOn}, so that the next reconcile tries again.
     */
    public KvWorker status(
            KvWorker worker, DesiredRegistrations desired, List<ReplicaOutcome> outcomes, List<ReplicaOutcome> former) {
        return status(worker, desired, outcomes, former, t -> null, Set.of());
    }

    /**
     * As above, with {@code reregisterOn}: per engine pod, the replicas where its registration is still to be made
     * anew ({@link Reregistrations#stillPending}), or null when none; and {@code unsynced}: the replicas that exist
     * but were not synced (not Ready). Such a replica stays in the {@code registeredOn} of the pods the status said
     * it holds: it may still hold them (it runs on, or comes back from a snapshot, holding them), and a pod deleted
     * meanwhile must stay listed, known as ours, until that replica is Ready again and it is removed there.
     */
    public KvWorker status(
            KvWorker worker,
            DesiredRegistrations desired,
            List<ReplicaOutcome> outcomes,
            List<ReplicaOutcome> former,
            Function<EngineTarget, List<String>> reregisterOn,
            Set<String> unsynced) {
        long generation = generation(worker);
        List<Condition> previous = previous(worker);
        List<PodRegistration> pods = new ArrayList<>();
        int registeredEverywhere = 0;
        Map<Long, List<String>> unsyncedOn = heldBy(worker, unsynced);
        Map<Long, Set<String>> listed = listedOn(worker);
        for (EngineTarget t : desired.targets()) {
            List<String> on = outcomes.stream()
                    .filter(o -> o.registered().contains(t.instanceId()))
                    .map(ReplicaOutcome::replica)
                    .toList();
            if (!outcomes.isEmpty() && on.size() == outcomes.size()) {
                registeredEverywhere++;
            }
            List<String> all = new ArrayList<>(on);
            all.addAll(stillOn(listed, t.instanceId(), former));
            all.addAll(unsyncedOn.getOrDefault(t.instanceId(), List.of()));
            all = all.stream().distinct().sorted().toList();
            pods.add(new PodRegistration(
                    t.pod(),
                    Long.toUnsignedString(t.instanceId()),
                    t.endpoint(),
                    t.replayEndpoint(),
                    all,
                    t.uid(),
                    reregisterOn.apply(t)));
        }
        pods.addAll(leftovers(worker, desired, outcomes, former, unsyncedOn, listed));
        pods.sort(Comparator.comparing(PodRegistration::pod));

        Map<String, String> failures = new LinkedHashMap<>();
        java.util.stream.Stream.concat(outcomes.stream(), former.stream())
                .filter(ReplicaOutcome::failed)
                .sorted(Comparator.comparing(ReplicaOutcome::replica))
                .forEach(o -> failures.put(o.replica(), o.error()));
        failures.putAll(desired.podErrors());

        int matched = desired.targets().size();
        boolean noReplicas = outcomes.isEmpty();
        boolean ready = failures.isEmpty() && !noReplicas && registeredEverywhere == matched;
        String readyReason = ready
                ? "AllRegistered"
                : noReplicas ? "NoReadyReplicas" : !failures.isEmpty() ? "RegistrationErrors" : "Registering";
        String readyMessage = noReplicas
                ? "no Ready replica of KvIndexer " + worker.getSpec().getIndexerRef()
                : registeredEverywhere + " of " + matched + " engine pods registered on all " + outcomes.size()
                        + " ready replicas";
        List<Condition> conditions = List.of(
                Conditions.of(Conditions.READY, ready, readyReason, readyMessage, generation, previous, clock),
                Conditions.of(
                        Conditions.PROGRESSING,
                        registeredEverywhere < matched,
                        registeredEverywhere < matched ? "Registering" : "Stable",
                        (matched - registeredEverywhere) + " engine pods still to register everywhere",
                        generation,
                        previous,
                        clock),
                degraded(failures, rankProblems(desired, outcomes), generation, previous));
        return statusOnly(
                worker, new KvWorkerStatus(generation, matched, registeredEverywhere, pods, conditions), KvWorker::new);
    }

    /**
     * Degraded when a replica or pod failed, when a replica is not connected to a rank of one of our pods (the engine
     * is down, or does not publish at the registered port: the replica hears nothing from it), or when a replica says
     * its index is not exact for one (a gap being replayed, or batches lost that could not be replayed): a router may
     * weigh its answers less.
     */
    private Condition degraded(
            Map<String, String> failures, RankProblems ranks, long generation, List<Condition> previous) {
        String reason = !failures.isEmpty()
                ? "ReplicaOrPodErrors"
                : !ranks.notConnected().isEmpty()
                        ? "NotConnected"
                        : !ranks.notExact().isEmpty() ? "NotExact" : "AsExpected";
        List<String> parts = new ArrayList<>();
        if (!failures.isEmpty()) {
            parts.add(describe(failures));
        }
        list(parts, "not connected", ranks.notConnected());
        list(parts, "not exact", ranks.notExact());
        return Conditions.of(
                Conditions.DEGRADED,
                !parts.isEmpty(),
                reason,
                parts.isEmpty() ? "all replicas reachable, every engine rank exact" : String.join("; ", parts),
                generation,
                previous,
                clock);
    }

    /** {@code 2 engine rank(s) not exact: a; b}, at most {@link #MAX_NOT_EXACT_SHOWN} named. */
    private static void list(List<String> parts, String what, List<String> ranks) {
        if (!ranks.isEmpty()) {
            int shown = Math.min(ranks.size(), MAX_NOT_EXACT_SHOWN);
            parts.add(ranks.size() + " engine rank(s) " + what + ": "
                    + String.join("; ", ranks.subList(0, shown))
                    + (ranks.size() > shown ? "; and " + (ranks.size() - shown) + " more" : ""));
        }
    }

    /** The ranks of our pods a replica is not connected to, and those it says are not exact, each sorted. */
    record RankProblems(List<String> notConnected, List<String> notExact) {}

    /**
     * {@code vllm-a rank 0 on kv-1: degraded (unrecoverable gap) since ...} and {@code vllm-a rank 0 on kv-1:
     * Connection refused}, by pod, rank and replica.
     */
    static RankProblems rankProblems(DesiredRegistrations desired, List<ReplicaOutcome> outcomes) {
        Map<Long, String> pods = new HashMap<>();
        desired.targets().forEach(t -> pods.put(t.instanceId(), t.pod()));
        List<String> notConnected = new ArrayList<>();
        List<String> notExact = new ArrayList<>();
        for (ReplicaOutcome o : outcomes) {
            o.notExact().forEach((key, x) -> {
                String pod = pods.get(key.instanceId());
                if (pod != null) {
                    String where = pod + " rank " + key.dpRank() + " on " + o.replica() + ": ";
                    if (x.connected()) {
                        notExact.add(where + x.describe());
                    } else {
                        notConnected.add(where + x.reason());
                    }
                }
            });
        }
        notConnected.sort(null);
        notExact.sort(null);
        return new RankProblems(notConnected, notExact);
    }

    /** A refused spec is a notReady that is also Degraded. */
    @Override
    public KvWorker refused(KvWorker worker, String reason, String message) {
        return notReady(worker, reason, message, true);
    }

    /** Ready false with a reason (bad spec, missing indexer); remembered pods are kept so they can be removed later. */
    public KvWorker notReady(KvWorker worker, String reason, String message, boolean degraded) {
        long generation = generation(worker);
        List<Condition> previous = previous(worker);
        KvWorkerStatus old = worker.getStatus();
        List<Condition> conditions = List.of(
                Conditions.of(Conditions.READY, false, reason, message, generation, previous, clock),
                Conditions.of(Conditions.PROGRESSING, false, reason, message, generation, previous, clock),
                Conditions.of(
                        Conditions.DEGRADED,
                        degraded,
                        degraded ? reason : "AsExpected",
                        degraded ? message : "nothing to report",
                        generation,
                        previous,
                        clock));
        return statusOnly(
                worker,
                new KvWorkerStatus(
                        generation, 0, 0, old == null || old.pods() == null ? List.of() : old.pods(), conditions),
                KvWorker::new);
    }

    /** Reason of the conditions while the KvIndexer {@code spec.indexerRef} names does not exist. */
    public static final String INDEXER_NOT_FOUND = "IndexerNotFound";

    /**
     * The KvIndexer does not exist: Ready false saying so; each pod stays listed (it is ours to remove should a
     * replica still hold it), registered only on the replicas ({@code former}) that may still hold it, and Degraded
     * names those whose unregistration failed.
     */
    public KvWorker indexerMissing(KvWorker worker, String message, List<ReplicaOutcome> former) {
        long generation = generation(worker);
        List<Condition> previous = previous(worker);
        KvWorkerStatus old = worker.getStatus();
        List<PodRegistration> pods = new ArrayList<>();
        Map<Long, Set<String>> listed = listedOn(worker);
        if (old != null && old.pods() != null) {
            for (PodRegistration p : old.pods()) {
                List<String> still = new ArrayList<>(stillOn(listed, Long.parseUnsignedLong(p.instanceId()), former));
                still.sort(null);
                pods.add(new PodRegistration(
                        p.pod(), p.instanceId(), p.endpoint(), p.replayEndpoint(), still, p.uid(), p.reregisterOn()));
            }
        }
        Map<String, String> failures = new LinkedHashMap<>();
        former.stream()
                .filter(ReplicaOutcome::failed)
                .sorted(Comparator.comparing(ReplicaOutcome::replica))
                .forEach(o -> failures.put(o.replica(), o.error()));
        boolean degraded = !failures.isEmpty();
        List<Condition> conditions = List.of(
                Conditions.of(Conditions.READY, false, INDEXER_NOT_FOUND, message, generation, previous, clock),
                Conditions.of(Conditions.PROGRESSING, false, INDEXER_NOT_FOUND, message, generation, previous, clock),
                Conditions.of(
                        Conditions.DEGRADED,
                        degraded,
                        degraded ? "ReplicaOrPodErrors" : "AsExpected",
                        degraded ? "still to unregister: " + describe(failures) : "nothing to report",
                        generation,
                        previous,
                        clock));
        return statusOnly(worker, new KvWorkerStatus(generation, 0, 0, pods, conditions), KvWorker::new);
    }

    /**
     * A reconcile threw: Ready false and Degraded true with what went wrong; counts and pods stay as they were
     * (the pods still say which instances are ours to remove).
     */
    @Override
    public KvWorker failed(KvWorker worker, Exception error) {
        long generation = generation(worker);
        KvWorkerStatus old = worker.getStatus();
        List<Condition> conditions = Conditions.reconcileFailed(error, generation, previous(worker), clock);
        return statusOnly(
                worker,
                old == null
                        ? new KvWorkerStatus(generation, 0, 0, List.of(), conditions)
                        : old.withConditions(conditions),
                KvWorker::new);
    }

    /**
     * Pods registered before and no longer desired that are still (or may still be) registered somewhere: kept so
     * that a later reconcile still knows they are ours to remove. Linear in the pods: a fleet of thousands is
     * walked on every reconcile.
     */
    private static List<PodRegistration> leftovers(
            KvWorker worker,
            DesiredRegistrations desired,
            List<ReplicaOutcome> outcomes,
            List<ReplicaOutcome> former,
            Map<Long, List<String>> unsyncedOn,
            Map<Long, Set<String>> listed) {
        if (worker.getStatus() == null || worker.getStatus().pods() == null) {
            return List.of();
        }
        boolean unknown = outcomes.stream().anyMatch(ReplicaOutcome::failed);
        Set<Long> desiredIds = new HashSet<>();
        Set<String> desiredPods = new HashSet<>();
        desired.targets().forEach(t -> {
            desiredIds.add(t.instanceId());
            desiredPods.add(t.pod());
        });
        List<PodRegistration> kept = new ArrayList<>();
        for (PodRegistration p : worker.getStatus().pods()) {
            long id = Long.parseUnsignedLong(p.instanceId());
            if (desiredIds.contains(id) || desiredPods.contains(p.pod())) {
                continue;
            }
            List<String> still = new ArrayList<>(outcomes.stream()
                    .filter(o -> o.leftovers().contains(id))
                    .map(ReplicaOutcome::replica)
                    .toList());
            still.addAll(stillOn(listed, id, former));
            still.addAll(unsyncedOn.getOrDefault(id, List.of()));
            still = still.stream().distinct().sorted().toList();
            if (unknown || !still.isEmpty()) {
                kept.add(
                        new PodRegistration(p.pod(), p.instanceId(), p.endpoint(), p.replayEndpoint(), still, p.uid()));
            }
        }
        return kept;
    }

    /**
     * Per instance, the replicas among {@code unsynced} (existing, not synced this round) that the status said hold
     * it: they still may, so they stay in its {@code registeredOn} until they are synced again.
     */
    private static Map<Long, List<String>> heldBy(KvWorker worker, Set<String> unsynced) {
        if (unsynced.isEmpty()
                || worker.getStatus() == null
                || worker.getStatus().pods() == null) {
            return Map.of();
        }
        Map<Long, List<String>> out = new HashMap<>();
        for (PodRegistration p : worker.getStatus().pods()) {
            if (p.registeredOn() != null) {
                List<String> on =
                        p.registeredOn().stream().filter(unsynced::contains).toList();
                if (!on.isEmpty()) {
                    out.put(Long.parseUnsignedLong(p.instanceId()), on);
                }
            }
        }
        return out;
    }

    /**
     * The former replicas that may still hold {@code id}: its unregistration failed there, or the replica could not
     * be reached and the status ({@code listed}, {@link #listedOn}) said it was registered there.
     */
    private static List<String> stillOn(Map<Long, Set<String>> listed, long id, List<ReplicaOutcome> former) {
        List<String> still = new ArrayList<>();
        for (ReplicaOutcome o : former) {
            if (o.leftovers().contains(id)
                    || (o.failed() && listed.getOrDefault(id, Set.of()).contains(o.replica()))) {
                still.add(o.replica());
            }
        }
        return still;
    }

    /** Per instance, the replicas the status says hold it: read once, then looked up per pod. */
    private static Map<Long, Set<String>> listedOn(KvWorker worker) {
        if (worker.getStatus() == null || worker.getStatus().pods() == null) {
            return Map.of();
        }
        Map<Long, Set<String>> out = new HashMap<>();
        for (PodRegistration p : worker.getStatus().pods()) {
            if (p.registeredOn() != null && !p.registeredOn().isEmpty()) {
                out.computeIfAbsent(Long.parseUnsignedLong(p.instanceId()), id -> new HashSet<>())
                        .addAll(p.registeredOn());
            }
        }
        return out;
    }

    static String describe(Map<String, String> errors) {
        StringBuilder sb = new StringBuilder();
        errors.forEach((k, v) ->
                sb.append(sb.isEmpty() ? "" : "; ").append(k).append(": ").append(v));
        return sb.toString();
    }

    private static List<Condition> previous(KvWorker w) {
        return w.getStatus() == null ? null : w.getStatus().conditions();
    }
}

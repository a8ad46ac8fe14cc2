package io.kvindexer.operator.indexer;

import static io.kvindexer.operator.reconcile.StatusUpdates.generation;
import static io.kvindexer.operator.reconcile.StatusUpdates.statusOnly;

import io.fabric8.kubernetes.api.model.Condition;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.crd.v1alpha1.Conditions;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.KvIndexerStatus;
import io.kvindexer.operator.crd.v1alpha1.KvIndexerStatus.ReplicaStatus;
import io.kvindexer.operator.reconcile.IndexerReplica;
import io.kvindexer.operator.reconcile.SpecStatuses;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

/** Builds the status patch of a KvIndexer: a fresh object holding only name, namespace and status. */
public final class KvIndexerStatusFactory implements SpecStatuses<KvIndexer> {
    private final Clock clock;

    public KvIndexerStatusFactory(Clock clock) {
        this.clock = clock;
    }

    /**
     * @param replicas   the replica pods that exist (ordinals below the desired size)
     * @param peerErrors replica pod (or "servicemonitor") → what went wrong (empty when all went well)
     */
    public KvIndexer status(KvIndexer kvi, List<IndexerReplica> replicas, Map<String, String> peerErrors) {
        int desired = kvi.getSpec().getReplicas();
        long generation = generation(kvi);
        List<Condition> previous = previous(kvi);
        List<String> urls = IndexerReplica.stableUrls(kvi, replicas);
        List<ReplicaStatus> rows = IntStream.range(0, desired)
                .mapToObj(i -> new ReplicaStatus(
                        IndexerNames.pod(kvi, i),
                        urls.get(i),
                        replicas.stream().anyMatch(r -> r.ordinal() == i && r.ready())))
                .toList();
        int ready = (int) rows.stream().filter(ReplicaStatus::ready).count();

        List<Condition> conditions = new ArrayList<>();
        boolean allReady = ready == desired;
        conditions.add(Conditions.of(
                Conditions.READY,
                allReady,
                allReady ? "AllReplicasReady" : "ReplicasNotReady",
                ready + " of " + desired + " replicas ready",
                generation,
                previous,
                clock));
        conditions.add(Conditions.of(
                Conditions.PROGRESSING,
                !allReady,
                allReady ? "Stable" : "WaitingForReplicas",
                allReady
                        ? "all replicas ready at generation " + generation
                        : "waiting for " + (desired - ready) + " replica(s) to become ready",
                generation,
                previous,
                clock));
        boolean degraded = !peerErrors.isEmpty();
        conditions.add(Conditions.of(
                Conditions.DEGRADED,
                degraded,
                degraded ? "SyncFailed" : "AsExpected",
                degraded ? describe(peerErrors) : "peer lists in sync",
                generation,
                previous,
                clock));
        return statusOnly(
                kvi,
                new KvIndexerStatus(
                        generation,
                        replicas.size(),
                        ready,
                        ready + "/" + desired,
                        IndexerNames.selector(kvi),
                        rows,
                        conditions),
                KvIndexer::new);
    }

    /**
     * Status for a spec the operator refuses ({@code reason}: it is invalid, or cannot be read): Ready false with the
     * reason, nothing else touched.
     */
    @Override
    public KvIndexer refused(KvIndexer kvi, String reason, String message) {
        long generation = generation(kvi);
        List<Condition> previous = previous(kvi);
        List<Condition> conditions = List.of(
                Conditions.of(Conditions.READY, false, reason, message, generation, previous, clock),
                Conditions.of(Conditions.PROGRESSING, false, reason, message, generation, previous, clock),
                Conditions.of(Conditions.DEGRADED, true, reason, message, generation, previous, clock));
        KvIndexerStatus kept = kept(kvi, generation);
        return statusOnly(
                kvi,
                new KvIndexerStatus(
                        generation,
                        kept.replicas(),
                        kept.readyReplicas(),
                        kept.ready(),
                        IndexerNames.selector(kvi),
                        kept.pods(),
                        conditions),
                KvIndexer::new);
    }

    /** A reconcile threw: all three conditions say what went wrong; the replica counts stay as they were. */
    @Override
    public KvIndexer failed(KvIndexer kvi, Exception error) {
        long generation = generation(kvi);
        List<Condition> conditions = Conditions.reconcileFailed(error, generation, previous(kvi), clock);
        return statusOnly(kvi, kept(kvi, generation).withConditions(conditions), KvIndexer::new);
    }

    /** The status as it is, or that of a KvIndexer with no replica yet where there is none. */
    private static KvIndexerStatus kept(KvIndexer kvi, long generation) {
        KvIndexerStatus old = kvi.getStatus();
        return old != null
                ? old
                : new KvIndexerStatus(generation, 0, 0, null, IndexerNames.selector(kvi), List.of(), null);
    }

    static String describe(Map<String, String> errors) {
        StringBuilder sb = new StringBuilder();
        errors.entrySet().stream()
                .sorted(Map.Entry.comparingByKey())
                .forEach(e -> sb.append(sb.isEmpty() ? "" : "; ")
                        .append(e.getKey())
                        .append(": ")
                        .append(e.getValue()));
        return sb.toString();
    }

    private static List<Condition> previous(KvIndexer kvi) {
        return kvi.getStatus() == null ? null : kvi.getStatus().conditions();
    }
}

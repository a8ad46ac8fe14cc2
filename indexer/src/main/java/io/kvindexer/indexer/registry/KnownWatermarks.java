package io.kvindexer.indexer.registry;

import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.ingest.SequenceWatermark;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The seq watermark of every registration, per (instance, dp rank), with the PUB endpoint it was learned from. A
 * watermark outlives its registration, so that the same stream registered again goes on where it was; of the
 * workers no registration holds, only the {@code keep} unregistered last are remembered. Engine pods come and go
 * all day, each with instance ids of its own, and a watermark kept for every one of them grew without bound.
 *
 * <p>Reads need no lock; changes are made under the registry's lock.
 */
final class KnownWatermarks {

    private final Map<WorkerKey, LearnedWatermark> all = new ConcurrentHashMap<>();
    /** the workers no registration holds now, the one unregistered first first */
    private final LinkedHashSet<WorkerKey> retired = new LinkedHashSet<>();

    private final int keep;

    KnownWatermarks(int keep) {
        this.keep = keep;
    }

    /** The watermark of {@code worker}; null when it was never registered or has been forgotten. */
    LearnedWatermark get(WorkerKey worker) {
        return all.get(worker);
    }

    /**
     * A registration of {@code worker} at {@code endpoint}: the watermark learned there before, else a fresh one (a
     * registration at another endpoint is another engine process, whose seqs start over).
     */
    LearnedWatermark register(WorkerKey worker, String endpoint) {
        retired.remove(worker);
        return all.compute(
                worker,
                (k, old) -> old != null && old.endpoint().equals(endpoint) ? old : new LearnedWatermark(endpoint));
    }

    /**
     * A watermark that recovery brought for a worker no registration holds (one {@code --unregister-grace} keeps
     * detached), unless one is known already.
     */
    void restoreUnregistered(
            WorkerKey worker, String endpoint, Consumer<SequenceWatermark> restore, Predicate<WorkerKey> held) {
        all.computeIfAbsent(worker, k -> {
            LearnedWatermark learned = new LearnedWatermark(endpoint);
            restore.accept(learned.watermark());
            return learned;
        });
        if (!retired.contains(worker)) {
            unregistered(worker, held);
        }
    }

    /**
     * {@code worker}'s registration went: its watermark is kept among the last {@code keep} unregistered, and the
     * oldest one beyond them that {@code held} does not still need (a worker the grace keeps detached) is forgotten.
     */
    void unregistered(WorkerKey worker, Predicate<WorkerKey> held) {
        retired.remove(worker);
        retired.add(worker);
        Iterator<WorkerKey> oldest = retired.iterator();
        while (retired.size() > keep && oldest.hasNext()) {
            WorkerKey k = oldest.next();
            if (!held.test(k)) {
                oldest.remove();
                all.remove(k);
            }
        }
    }
}

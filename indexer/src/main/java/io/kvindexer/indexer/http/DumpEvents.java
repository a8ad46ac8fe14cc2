package io.kvindexer.indexer.http;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.dump.RouterEvent;
import io.kvindexer.indexer.index.ModelIndex;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.longs.LongArrayList;
import it.unimi.dsi.fastutil.objects.Object2IntOpenHashMap;
import java.util.ArrayList;
import java.util.List;

/**
 * An index's memberships as Dynamo's single-block Stored RouterEvents, event ids counting from 0. The walk is
 * captured in columns of primitives (28 bytes a membership) and each event is built only when it is written: the
 * JSON {@code /dump} of a large index once held every event as objects, about five times the index's own size.
 */
public final class DumpEvents {

    private static final StorageTier[] TIERS = StorageTier.values();

    private final List<WorkerKey> workers = new ArrayList<>();
    /** per membership: its worker's place in {@link #workers} {@code << 4 |} the tier's ordinal {@code << 1 |} 1 if it has a parent */
    private final IntArrayList packed = new IntArrayList();

    private final LongArrayList parents = new LongArrayList();
    private final LongArrayList hashes = new LongArrayList();
    private final LongArrayList localHashes = new LongArrayList();

    private DumpEvents() {}

    /** Walks the index (in chunks under its read lock, as every dump does) into columns. */
    public static DumpEvents capture(ModelIndex index) {
        DumpEvents d = new DumpEvents();
        Object2IntOpenHashMap<WorkerKey> refs = new Object2IntOpenHashMap<>();
        refs.defaultReturnValue(-1);
        index.dump((worker, tier, hasParent, parentBlockHash, blockHash, localHash) -> {
            int ref = refs.getInt(worker);
            if (ref < 0) {
                ref = d.workers.size();
                d.workers.add(worker);
                refs.put(worker, ref);
            }
            d.packed.add(ref << 4 | tier.ordinal() << 1 | (hasParent ? 1 : 0));
            d.parents.add(parentBlockHash);
            d.hashes.add(blockHash);
            d.localHashes.add(localHash);
        });
        return d;
    }

    /** Every event at once: for tests and small indexes. */
    public static List<RouterEvent> of(ModelIndex index) {
        DumpEvents d = capture(index);
        List<RouterEvent> out = new ArrayList<>(d.size());
        for (int i = 0; i < d.size(); i++) {
            out.add(d.event(i));
        }
        return out;
    }

    public int size() {
        return packed.size();
    }

    /** The {@code i}-th membership as its event, with event id {@code i}. */
    public RouterEvent event(int i) {
        int p = packed.getInt(i);
        WorkerKey worker = workers.get(p >>> 4);
        return new RouterEvent(
                worker.instanceId(),
                worker.dpRank(),
                TIERS[p >>> 1 & 7],
                i,
                new RouterEvent.Stored((p & 1) != 0, parents.getLong(i), new long[] {hashes.getLong(i)}, new long[] {
                    localHashes.getLong(i)
                }));
    }
}

package io.kvindexer.indexer.http;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.dump.DumpJson;
import io.kvindexer.indexer.dump.RouterEvent;
import io.kvindexer.indexer.index.DumpSink;
import io.kvindexer.indexer.index.ModelIndex;
import io.kvindexer.indexer.index.StoreTimes;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.longs.Long2LongOpenHashMap;
import it.unimi.dsi.fastutil.longs.LongArrayList;
import it.unimi.dsi.fastutil.objects.Object2IntOpenHashMap;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * An index's memberships as Dynamo's single-block Stored RouterEvents, event ids counting from 0 across the whole
 * index. The walk fills columns of primitives (28 bytes a membership) and each event is built only when it is
 * written; the JSON {@code /dump} drains them between chunks of the walk, so it never holds more than one chunk.
 */
public final class DumpEvents implements DumpSink {

    private static final StorageTier[] TIERS = StorageTier.values();

    private final List<WorkerKey> workers = new ArrayList<>();
    private final Object2IntOpenHashMap<WorkerKey> refs = new Object2IntOpenHashMap<>();
    /** per membership: its worker's place in {@link #workers} {@code << 4 |} the tier's ordinal {@code << 1 |} 1 if it has a parent */
    private final IntArrayList packed = new IntArrayList();

    private final LongArrayList parents = new LongArrayList();
    private final LongArrayList hashes = new LongArrayList();
    private final LongArrayList localHashes = new LongArrayList();
    /** the index's last-store times, written with each block that has one ({@code last_store_ms}) */
    private final StoreTimes times;
    /** the event id of the first membership held: those drained before counted */
    private long firstId;

    public DumpEvents() {
        this(StoreTimes.NONE);
    }

    /** Events whose blocks carry the times {@code times} has for them. */
    public DumpEvents(StoreTimes times) {
        this.times = times;
        refs.defaultReturnValue(-1);
    }

    @Override
    public void block(
            WorkerKey worker,
            StorageTier tier,
            boolean hasParent,
            long parentBlockHash,
            long blockHash,
            long localHash) {
        int ref = refs.getInt(worker);
        if (ref < 0) {
            ref = workers.size();
            workers.add(worker);
            refs.put(worker, ref);
        }
        packed.add(ref << 4 | tier.ordinal() << 1 | (hasParent ? 1 : 0));
        parents.add(parentBlockHash);
        hashes.add(blockHash);
        localHashes.add(localHash);
    }

    /** Every event at once: for tests and small indexes. */
    public static List<RouterEvent> of(ModelIndex index) {
        DumpEvents d = new DumpEvents();
        index.dump(d);
        List<RouterEvent> out = new ArrayList<>(d.size());
        for (int i = 0; i < d.size(); i++) {
            out.add(d.event(i));
        }
        return out;
    }

    /** Memberships held, not yet drained. */
    public int size() {
        return packed.size();
    }

    /** Writes the events held, one object at a time, and lets their columns go; the ids go on from there. */
    public void drainTo(DumpJson.Writer writer) throws IOException {
        for (int i = 0; i < size(); i++) {
            writer.event(event(i));
        }
        firstId += size();
        packed.clear();
        parents.clear();
        hashes.clear();
        localHashes.clear();
    }

    /** The {@code i}-th membership held as its event. */
    private RouterEvent event(int i) {
        int p = packed.getInt(i);
        WorkerKey worker = workers.get(p >>> 4);
        StorageTier tier = TIERS[p >>> 1 & 7];
        long hash = hashes.getLong(i);
        Long2LongOpenHashMap known = times.isEmpty() ? null : times.of(worker, tier);
        long time = known == null ? RouterEvent.Stored.NO_TIME : known.get(hash); // its default is Long.MIN_VALUE
        return new RouterEvent(
                worker.instanceId(),
                worker.dpRank(),
                tier,
                firstId + i,
                new RouterEvent.Stored(
                        (p & 1) != 0,
                        parents.getLong(i),
                        new long[] {hash},
                        new long[] {localHashes.getLong(i)},
                        time == RouterEvent.Stored.NO_TIME ? null : new long[] {time}));
    }
}

package io.kvindexer.indexer.index;

import io.kvindexer.indexer.common.WorkerKey;
import it.unimi.dsi.fastutil.objects.Object2IntOpenHashMap;
import java.util.Arrays;
import java.util.Objects;

/**
 * The workers of one index interned to small int slots, so that a membership is an int (see
 * {@link MembershipCode}) and per-query state is an array indexed by slot. A slot counts the memberships it holds
 * and is released (and later reused) when that count drops to zero.
 *
 * <p>Not thread-safe: {@link PrefixIndex} guards it with its lock; {@link #order()} may also run under the
 * read lock (see there).
 */
final class WorkerSlots {

    static final int NONE = -1;
    /** slots are below this, so a single membership code stays below {@link PackedOwners#MIN_WORD} */
    static final int MAX_SLOTS = 1 << 28;

    private final Object2IntOpenHashMap<WorkerKey> slotOf = new Object2IntOpenHashMap<>();
    private WorkerKey[] workerOfSlot = new WorkerKey[16];
    private long[] memberships = new long[16];
    private final IdPool slots = new IdPool();
    private volatile Order order;

    /**
     * The live slots in worker order and their workers, both immutable once built: an answer keeps them (instead
     * of copying a worker per matched slot), and a slot taken or released makes a new one.
     */
    record Order(int[] slots, WorkerKey[] workers) {

        /** This order with {@code worker} (not in it) at {@code slot}, in its place: one copy, no sort. */
        Order with(int slot, WorkerKey worker) {
            int at = -Arrays.binarySearch(workers, worker, WorkerKey.ORDER) - 1;
            int[] s = new int[slots.length + 1];
            WorkerKey[] w = new WorkerKey[workers.length + 1];
            System.arraycopy(slots, 0, s, 0, at);
            System.arraycopy(workers, 0, w, 0, at);
            s[at] = slot;
            w[at] = worker;
            System.arraycopy(slots, at, s, at + 1, slots.length - at);
            System.arraycopy(workers, at, w, at + 1, workers.length - at);
            return new Order(s, w);
        }

        /** This order without {@code worker} (in it). */
        Order without(WorkerKey worker) {
            int at = Arrays.binarySearch(workers, worker, WorkerKey.ORDER);
            int[] s = new int[slots.length - 1];
            WorkerKey[] w = new WorkerKey[workers.length - 1];
            System.arraycopy(slots, 0, s, 0, at);
            System.arraycopy(workers, 0, w, 0, at);
            System.arraycopy(slots, at + 1, s, at, s.length - at);
            System.arraycopy(workers, at + 1, w, at, w.length - at);
            return new Order(s, w);
        }
    }

    WorkerSlots() {
        slotOf.defaultReturnValue(NONE);
    }

    /** Slots are below this value; a slot whose {@link #worker} is null is free. */
    int highWater() {
        return slots.highWater();
    }

    /** The worker's slot, or NONE when it holds nothing. */
    int slotOf(WorkerKey worker) {
        return slotOf.getInt(worker);
    }

    WorkerKey worker(int slot) {
        return workerOfSlot[slot];
    }

    /** The worker's slot, taking a free one when it has none yet. */
    int intern(WorkerKey worker) {
        int slot = slotOf.getInt(worker);
        if (slot != NONE) {
            return slot;
        }
        slot = slots.take();
        if (slot >= MAX_SLOTS) {
            // a membership code (slot << 2 | tier) must stay below PackedOwners.MIN_WORD
            throw new IllegalStateException("the index holds " + MAX_SLOTS + " workers, its maximum");
        }
        if (slot == workerOfSlot.length) {
            workerOfSlot = Arrays.copyOf(workerOfSlot, slot * 2);
            memberships = Arrays.copyOf(memberships, slot * 2);
        }
        workerOfSlot[slot] = worker;
        memberships[slot] = 0;
        slotOf.put(worker, slot);
        // kept in step rather than rebuilt: a fleet's first stores take a slot each, and a sort of a thousand
        // workers by the next query cost it hundreds of µs every time (the eleventh round's 1,024-worker p99)
        Order o = order;
        order = o == null ? null : o.with(slot, worker);
        return slot;
    }

    void addMembership(int slot) {
        memberships[slot]++;
    }

    void removeMembership(int slot) {
        memberships[slot]--;
    }

    /** Releases the slot when it holds nothing (any more). */
    void releaseIfEmpty(int slot) {
        if (memberships[slot] == 0) {
            release(slot);
        }
    }

    /** Releases the slot whatever it still counts (its memberships were dropped by a scan). */
    void release(int slot) {
        WorkerKey w = workerOfSlot[slot];
        if (w != null) {
            slotOf.removeInt(w);
            workerOfSlot[slot] = null;
            memberships[slot] = 0;
            slots.release(slot);
            Order o = order;
            order = o == null ? null : o.without(w);
        }
    }

    /** Per slot, whether it belongs to this instance (and this dp rank unless {@code allRanks}); null when none. */
    boolean[] slotsOf(long instanceId, int dpRank, boolean allRanks) {
        boolean[] out = new boolean[slots.highWater()];
        boolean any = false;
        for (int s = 0; s < out.length; s++) {
            WorkerKey w = workerOfSlot[s];
            if (w != null && w.instanceId() == instanceId && (allRanks || w.dpRank() == dpRank)) {
                out[s] = true;
                any = true;
            }
        }
        return any ? out : null;
    }

    /**
     * Live slots ordered by instance id, then dp rank (unsigned, {@link WorkerKey#ORDER}), with their workers:
     * results come out sorted without sorting per query. Built once, lazily, under the write lock or, racing
     * benignly with another reader, under the read lock (both compute the same arrays); then a slot taken or
     * released inserts or removes its one entry ({@link Order#with}, {@link Order#without}), by the same order.
     */
    Order order() {
        Order o = order;
        if (o == null) {
            WorkerKey[] workers = Arrays.stream(workerOfSlot, 0, slots.highWater())
                    .filter(Objects::nonNull)
                    .sorted(WorkerKey.ORDER)
                    .toArray(WorkerKey[]::new);
            int[] ordered = new int[workers.length];
            for (int k = 0; k < workers.length; k++) {
                ordered[k] = slotOf.getInt(workers[k]);
            }
            o = new Order(ordered, workers);
            order = o;
        }
        return o;
    }
}

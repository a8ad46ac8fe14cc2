package io.kvindexer.indexer.index;

import java.util.Arrays;
import java.util.function.IntPredicate;
import java.util.function.IntSupplier;
import java.util.function.IntToLongFunction;

/**
 * An open-addressing hash table of node ids whose keys live in the nodes themselves (linear probing, backward-shift
 * deletion, no tombstones). An entry is one int: the node id + 1 in the low {@link #ID_BITS} bits and 4 bits of the
 * key's hash above them, so a probe reads a node only when those bits agree (15 in 16 foreign entries are skipped
 * without touching their node). The capacity doubles when the table is 80 % full (40–80 % full, 5–10 bytes per
 * node; a table may ask to double sooner, as {@link NodeStore}'s prefix table does): growing by half kept it 53–80 %
 * full but placed every node three times over on the way up (a rebuild places all the nodes so far), and those
 * rebuilds were half of the writer's time while an index grows; doubling places them twice.
 *
 * <p>Readers probe with {@link #home}, {@link #next}, {@link #at}, {@link #mayHold} and {@link #node}.
 * Not thread-safe: {@link PrefixIndex} guards it with its lock.
 */
final class NodeTable {

    /** node ids are below {@code 2^ID_BITS - 1} */
    static final int ID_BITS = 28;

    static final int MAX_NODES = (1 << ID_BITS) - 2;
    private static final int ID_MASK = (1 << ID_BITS) - 1;

    private final IntToLongFunction keyHash;
    /** the table doubles when more than this many percent of its slots would be full */
    private final int fullPercent;

    private final IntPredicate held;
    private final IntSupplier highWater;
    private int[] slots = new int[grown(0)];
    /** {@link #remove}'s scratch: the homes of the entries after the removed one */
    private int[] clusterHomes = new int[16];

    private int size;
    private long missHash;
    private int missSlot = -1;

    /**
     * @param keyHash   the well-mixed 64-bit hash of a node's key, read from the node
     * @param held      whether a node is in the table (every live node but the one being inserted)
     * @param highWater node ids are below this
     */
    NodeTable(IntToLongFunction keyHash, IntPredicate held, IntSupplier highWater) {
        this(keyHash, held, highWater, 80);
    }

    /** @param fullPercent the table doubles when more than this many percent of its slots would be full */
    NodeTable(IntToLongFunction keyHash, IntPredicate held, IntSupplier highWater, int fullPercent) {
        this.fullPercent = fullPercent;
        this.keyHash = keyHash;
        this.held = held;
        this.highWater = highWater;
    }

    int home(long hash) {
        return (int) (((hash >>> 32) * slots.length) >>> 32);
    }

    int next(int i) {
        return i + 1 == slots.length ? 0 : i + 1;
    }

    /** The entry at slot i; 0 = empty (the end of a probe sequence). */
    int at(int i) {
        return slots[i];
    }

    /** Whether a non-empty entry can be a node whose key has this hash (false: it certainly is not). */
    static boolean mayHold(int entry, long hash) {
        return entry >>> ID_BITS == ((int) hash & 0xF);
    }

    static int node(int entry) {
        return (entry & ID_MASK) - 1;
    }

    /**
     * Where a probe for {@code hash} that found nothing ended (an empty slot), so that inserting a node with that
     * key right after costs no second probe (find-then-insert). Any change to the table forgets it. Called by the
     * writer's own find under the write lock, never by readers (who may run at the same time as each other).
     */
    void missedAt(long hash, int slot) {
        missHash = hash;
        missSlot = slot;
    }

    void insert(int node) {
        int hint = missSlot;
        missSlot = -1;
        long hash = keyHash.applyAsLong(node);
        if (hint >= 0 && hash == missHash && !full(size + 1, slots.length)) {
            slots[hint] = entry(node, hash);
            size++;
            return;
        }
        if (full(size + 1, slots.length)) {
            rebuild(grown(slots.length), node);
        }
        place(node, hash);
        size++;
    }

    /** Sizes an empty table so that {@code count} inserts rebuild nothing: the capacity growth would reach. */
    void sizeFor(int count) {
        if (size != 0) {
            throw new IllegalStateException("sizeFor on a table that holds " + size + " entries");
        }
        slots = new int[Math.max(slots.length, capacityFor(count))];
        missSlot = -1;
    }

    /**
     * After {@link #sizeFor} was told of more nodes than came: rebuilds the table down to the capacity growth would
     * have reached for what it holds, so that a stale count costs no memory.
     */
    void trimToSize() {
        int capacity = capacityFor(size);
        if (capacity < slots.length) {
            rebuild(capacity, -1);
        }
    }

    int capacity() {
        return slots.length;
    }

    /** The capacity growth reaches for {@code count} entries. */
    private int capacityFor(int count) {
        int capacity = grown(0);
        while (full(count, capacity)) {
            capacity = grown(capacity);
        }
        return capacity;
    }

    /**
     * Puts {@code node}, whose key has {@code hash}, at the empty slot {@code slot} where a probe from its home ended
     * (a bulk build into a table {@link #sizeFor} sized: no growth check, the key is not read again).
     */
    void fill(int slot, long hash, int node) {
        slots[slot] = entry(node, hash);
        size++;
    }

    /**
     * Places a node that is not in the table at the first empty slot from its home, without a growth check: for a
     * table {@link #sizeFor} sized for it, with the key's hash the caller already has.
     */
    void placeSized(int node, long hash) {
        place(node, hash);
        size++;
    }

    private boolean full(int count, int capacity) {
        return count * 100L > capacity * (long) fullPercent;
    }

    /**
     * The next capacity: about double, and such that the array with its 16-byte header is a power of two of bytes.
     * A big array is a G1 humongous object that occupies whole regions (1–32 MB, a power of two): a plain 2^20 ints
     * (4 MB and 16 bytes) took two 4 MB regions, 40.5 instead of 30.6 bytes per membership on the conversation trace.
     */
    private static int grown(int capacity) {
        return capacity == 0 ? 1024 - 4 : capacity * 2 + 4;
    }

    /**
     * Re-places every held node but {@code skip} into {@code capacity} slots. A sparse table (few entries among the
     * node ids) re-places its own entries, which are those nodes; a dense one reads the keys in node order
     * (sequentially from the node pages). A table past the caches is not filled in that order, which writes its
     * slots at random (a miss each, the writer's largest cost while an index grows): the entries are first bucketed
     * by the upper bits of their hashes, which order the homes ({@link #home}), and each bucket is then placed into
     * its own stretch of {@value #BUCKET_SLOTS} slots, which stays in the cache.
     */
    private void rebuild(int capacity, int skip) {
        missSlot = -1;
        int[] old = slots;
        slots = new int[capacity];
        int end = highWater.getAsInt();
        if ((long) size * SPARSE_BELOW < end) {
            // few entries among many ids (the prefix table holds ~2 % of the nodes): re-place what the table holds,
            // a node read each, rather than test every id; an entry keeps its bits, only its slot changes
            for (int e : old) {
                if (e != 0) {
                    placeEntry(e, keyHash.applyAsLong(node(e)));
                }
            }
            return;
        }
        if (capacity <= BUCKETED_FROM) {
            for (int n = 0; n < end; n++) {
                if (n != skip && held.test(n)) {
                    place(n, keyHash.applyAsLong(n));
                }
            }
            return;
        }
        int buckets = capacity / BUCKET_SLOTS;
        int[] starts = new int[buckets + 1];
        long[] byNode = new long[size];
        int count = 0;
        for (int n = 0; n < end; n++) {
            if (n != skip && held.test(n)) {
                long hash = keyHash.applyAsLong(n);
                if (count == byNode.length) {
                    byNode = Arrays.copyOf(byNode, count + 1024); // held and size disagree: never, but not fatal
                }
                byNode[count++] = hash & HIGH | entry(n, hash) & LOW;
                starts[bucket(hash, buckets) + 1]++;
            }
        }
        for (int b = 0; b < buckets; b++) {
            starts[b + 1] += starts[b];
        }
        long[] byBucket = new long[count];
        for (int k = 0; k < count; k++) {
            long e = byNode[k];
            byBucket[starts[bucket(e, buckets)]++] = e;
        }
        for (long e : byBucket) {
            placeEntry((int) e, e); // the upper half is the hash's, all that a home reads
        }
    }

    /**
     * {@link #rebuild} re-places the old table's entries when they are fewer than one node id in this many: a random
     * node read each costs less than testing every id in order
     */
    private static final int SPARSE_BELOW = 16;

    /** {@link #rebuild} buckets tables above this many slots (256 KB: below it the table stays in the cache) */
    private static final int BUCKETED_FROM = 1 << 16;
    /** slots per bucket of a bucketed {@link #rebuild}: 16 KB */
    private static final int BUCKET_SLOTS = 1 << 12;

    private static final long HIGH = 0xFFFFFFFF00000000L;
    private static final long LOW = 0xFFFFFFFFL;

    /** The bucket of a hash (or of a rebuild's entry with the hash's upper half): monotone in those bits, as homes. */
    private static int bucket(long hash, int buckets) {
        return (int) (((hash >>> 32) * buckets) >>> 32);
    }

    private static int entry(int node, long hash) {
        return ((int) hash & 0xF) << ID_BITS | (node + 1);
    }

    private void place(int node, long hash) {
        placeEntry(entry(node, hash), hash);
    }

    /** An entry at the first empty slot from the home of {@code hash} (no growth check). */
    private void placeEntry(int entry, long hash) {
        int i = home(hash);
        while (slots[i] != 0) {
            i = next(i);
        }
        slots[i] = entry;
    }

    /**
     * Removes a node that is in the table. The homes of the entries after it, up to the next empty slot, are read
     * from their nodes in one pass before any entry moves, so those loads overlap.
     */
    void remove(int node) {
        missSlot = -1;
        int gap = home(keyHash.applyAsLong(node));
        while ((slots[gap] & ID_MASK) != node + 1) {
            gap = next(gap);
        }
        int n = 0;
        for (int i = next(gap); slots[i] != 0; i = next(i)) {
            if (n == clusterHomes.length) {
                clusterHomes = Arrays.copyOf(clusterHomes, n * 2);
            }
            clusterHomes[n++] = home(keyHash.applyAsLong(node(slots[i])));
        }
        for (int k = 0, i = gap; k < n; k++) {
            i = next(i);
            if (!cyclicallyBetween(clusterHomes[k], gap, i)) {
                slots[gap] = slots[i];
                gap = i;
            }
        }
        slots[gap] = 0;
        size--;
    }
    /** True when {@code home} lies cyclically in (gap, i]: that entry must stay where it is. */
    private static boolean cyclicallyBetween(int home, int gap, int i) {
        return gap <= i ? home > gap && home <= i : home > gap || home <= i;
    }
}

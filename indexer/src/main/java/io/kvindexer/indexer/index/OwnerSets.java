package io.kvindexer.indexer.index;

import java.util.Arrays;

/**
 * The owners of every block node: per node a set of membership codes ({@link MembershipCode}), paged by node id
 * like {@link NodeStore}'s other fields, in the cheapest of three forms for its size.
 *
 * <p>One int per node says which: the owner's code itself when there is exactly one (most blocks), {@link #FREE}
 * when there is none (a free node), two or three small codes packed into the word itself ({@link PackedOwners}:
 * no list, so a block with two or three owners costs nothing beyond its node), or {@code ~ref}: a small list in
 * {@link OwnerLists} (up to {@link OwnerLists#MAX} codes), or, with {@link #DENSE} set in {@code ref}, per-tier
 * bitsets in {@link OwnerBits}. Every form keeps its codes in the order a list would (appended at the end, a
 * removed code replaced by the last), so the dump's order does not depend on the form.
 * A set turns dense when it outgrows a list and back into a list when it shrinks to {@link #BACK_TO_LIST} codes (the
 * gap keeps one owner coming and going from converting it each time).
 *
 * <p>Not thread-safe: {@link PrefixIndex} guards it with its lock.
 */
final class OwnerSets {

    static final int NONE = -1;
    private static final int FREE = Integer.MIN_VALUE;
    private static final int DENSE = 1 << 30;
    private static final int BACK_TO_LIST = 32;
    private static final int PACKED = PackedOwners.MIN_WORD;

    /**
     * {@link NodeStore}'s node pages: a node's owner word is the lower half of its {@link NodeStore#OWNERS} long
     * (next to its hashes, so loading a probed node loads its owners).
     */
    private long[][] words = new long[NodeStore.FIRST_PAGES][];

    /** {@link #sameCodes}'s tier for "every tier" */
    private static final int ALL_TIERS = -1;

    /**
     * per node bits, paged like the words: the node's owners are provably those of node {@code id - 1} (both
     * non-empty; the same word, the same list in the same order, or equal bitsets on every tier), refreshed on every
     * change of either ({@link #changed}). With {@link NodeStore#inLineRun} it marks runs of blocks with the same
     * holders, which a walk takes without an intersection.
     */
    private long[][] same = new long[NodeStore.FIRST_PAGES][];

    /** nodes from here on have their {@link #same} bits deferred ({@link #deferSame}); MAX_VALUE: none */
    private int sameFrom = Integer.MAX_VALUE;

    private final OwnerLists lists = new OwnerLists();
    private final OwnerBits bits = new OwnerBits();
    private int[] scratch = new int[OwnerLists.MAX + 1];

    /** Takes the owner words of node page {@code page} (see {@link NodeStore#PAGE_BITS}) and marks them free. */
    void addPage(int page, long[] nodePage) {
        if (page == words.length) {
            words = Arrays.copyOf(words, page * 2);
            same = Arrays.copyOf(same, page * 2);
        }
        words[page] = nodePage;
        same[page] = new long[NodeStore.PAGE / 64];
        for (int at = NodeStore.OWNERS; at < nodePage.length; at += NodeStore.STRIDE) {
            nodePage[at] = nodePage[at] & ~0xFFFFFFFFL | (FREE & 0xFFFFFFFFL);
        }
    }

    /** Forgets a node's owners (a new or freed node), releasing their storage. */
    void reset(int node) {
        int word = word(node);
        if (word < 0 && word != FREE) {
            int ref = ~word;
            if ((ref & DENSE) != 0) {
                bits.free(ref & ~DENSE);
            } else {
                lists.free(ref);
            }
        }
        setWord(node, FREE);
        changed(node);
    }

    boolean isEmpty(int node) {
        return word(node) == FREE;
    }

    int count(int node) {
        int word = word(node);
        if (word >= 0) {
            return word < PACKED ? 1 : PackedOwners.count(word);
        }
        if (word == FREE) {
            return 0;
        }
        int ref = ~word;
        return (ref & DENSE) != 0 ? bits.count(ref & ~DENSE) : lists.count(ref);
    }

    /** The owner when there is exactly one, else NONE. */
    int single(int node) {
        int word = word(node);
        return word >= 0 && word < PACKED ? word : NONE;
    }

    boolean contains(int node, int code) {
        int word = word(node);
        if (word >= PACKED) {
            return PackedOwners.indexOf(word, code) >= 0;
        }
        if (word >= 0 || word == FREE) {
            return word == code;
        }
        int ref = ~word;
        return (ref & DENSE) != 0 ? bits.contains(ref & ~DENSE, code) : lists.contains(ref, code);
    }

    /** Writes the node's codes into {@code out} (at least {@link #count} long); returns how many. */
    int codes(int node, int[] out) {
        int word = word(node);
        if (word >= PACKED) {
            int n = PackedOwners.count(word);
            for (int i = 0; i < n; i++) {
                out[i] = PackedOwners.code(word, i);
            }
            return n;
        }
        if (word >= 0) {
            out[0] = word;
            return 1;
        }
        if (word == FREE) {
            return 0;
        }
        int ref = ~word;
        if ((ref & DENSE) != 0) {
            return bits.codes(ref & ~DENSE, out);
        }
        int n = lists.count(ref);
        for (int i = 0; i < n; i++) {
            out[i] = lists.at(ref, i);
        }
        return n;
    }

    /** Adds an owner; false when it was already there. */
    boolean add(int node, int code) {
        return changed(node, addCode(node, code));
    }

    private boolean addCode(int node, int code) {
        int word = word(node);
        if (word == FREE) {
            setWord(node, code);
            return true;
        }
        if (word >= PACKED) {
            if (PackedOwners.indexOf(word, code) >= 0) {
                return false;
            }
            int n = PackedOwners.count(word);
            if (n < PackedOwners.MAX && PackedOwners.fits(code)) {
                setWord(node, PackedOwners.with(word, n, code));
                return true;
            }
            for (int i = 0; i < n; i++) {
                scratch[i] = PackedOwners.code(word, i);
            }
            scratch[n] = code;
            setWord(node, ~lists.create(scratch, n + 1));
            return true;
        }
        if (word >= 0) {
            if (word == code) {
                return false;
            }
            scratch[0] = word;
            scratch[1] = code;
            setWord(node, PackedOwners.fit(scratch, 2) ? PackedOwners.of(scratch, 2) : ~lists.create(scratch, 2));
            return true;
        }
        int ref = ~word;
        if ((ref & DENSE) != 0) {
            return bits.add(ref & ~DENSE, code);
        }
        if (lists.contains(ref, code)) {
            return false;
        }
        int grown = lists.append(ref, code);
        if (grown < 0) {
            int n = lists.count(ref);
            for (int i = 0; i < n; i++) {
                scratch[i] = lists.at(ref, i);
            }
            scratch[n++] = code;
            lists.free(ref);
            setWord(node, ~(DENSE | bits.create(scratch, n)));
        } else {
            setWord(node, ~grown);
        }
        return true;
    }

    /** Removes an owner; false when it was not there. */
    boolean remove(int node, int code) {
        return changed(node, removeCode(node, code));
    }

    private boolean removeCode(int node, int code) {
        int word = word(node);
        if (word >= PACKED) {
            int i = PackedOwners.indexOf(word, code);
            if (i < 0) {
                return false;
            }
            int n = PackedOwners.count(word);
            for (int k = 0; k < n; k++) {
                scratch[k] = PackedOwners.code(word, k);
            }
            scratch[i] = scratch[n - 1]; // as a list does: the last code takes the removed one's place
            setWord(node, n == 2 ? scratch[0] : PackedOwners.of(scratch, 2));
            return true;
        }
        if (word >= 0 || word == FREE) {
            if (word != code) {
                return false;
            }
            setWord(node, FREE);
            return true;
        }
        int ref = ~word;
        if ((ref & DENSE) != 0) {
            int id = ref & ~DENSE;
            if (!bits.remove(id, code)) {
                return false;
            }
            if (bits.count(id) <= BACK_TO_LIST) {
                int n = bits.codes(id, scratch);
                bits.free(id);
                setWord(node, ~lists.create(scratch, n));
            }
            return true;
        }
        if (lists.count(ref) == 2) {
            int a = lists.at(ref, 0);
            int b = lists.at(ref, 1);
            if (a != code && b != code) {
                return false;
            }
            lists.free(ref);
            setWord(node, a == code ? b : a);
            return true;
        }
        int shrunk = lists.remove(ref, code);
        if (shrunk < 0) {
            return false;
        }
        int n = lists.count(shrunk);
        if (n <= PackedOwners.MAX) {
            for (int i = 0; i < n; i++) {
                scratch[i] = lists.at(shrunk, i);
            }
            if (PackedOwners.fit(scratch, n)) {
                lists.free(shrunk);
                setWord(node, PackedOwners.of(scratch, n));
                return true;
            }
        }
        setWord(node, ~shrunk);
        return true;
    }

    /**
     * Removes every owner whose slot is flagged in {@code slots}, counting the removed ones per tier ordinal into
     * {@code removedPerTier}.
     */
    void removeSlots(int node, boolean[] slots, long[] removedPerTier) {
        int[] codes = new int[count(node)];
        int n = codes(node, codes);
        for (int i = 0; i < n; i++) {
            int slot = MembershipCode.slot(codes[i]);
            if (slot < slots.length && slots[slot]) {
                remove(node, codes[i]);
                removedPerTier[MembershipCode.tier(codes[i])]++;
            }
        }
    }

    /**
     * The query step: {@code out = in ∩ (slots holding this node on this tier)}, both bitsets over worker slots
     * (word i holds slots 64i..64i+63) of which only words {@code [lo, hi)} of {@code in} may be non-zero. Costs one
     * bit test per owner for a single owner or a list, one AND per word of {@code [lo, hi)} for a dense set: never
     * one operation per worker of a large set. {@code out} must be zero on {@code [lo, hi)}; returns the range of
     * its non-zero words as {@code outLo << 32 | outHi}, with {@code outLo >= outHi} when it is empty.
     */
    long intersect(int node, int tier, long[] in, int lo, int hi, long[] out) {
        int word = word(node);
        if (word == FREE) {
            return 0;
        }
        if (word >= PACKED) {
            long range = 0;
            for (int i = 0, n = PackedOwners.count(word); i < n; i++) {
                int code = PackedOwners.code(word, i);
                if (MembershipCode.tier(code) == tier) {
                    range = keep(MembershipCode.slot(code), in, out, lo, hi, range);
                }
            }
            return range;
        }
        if (word >= 0) {
            return MembershipCode.tier(word) == tier ? keep(MembershipCode.slot(word), in, out, lo, hi, 0) : 0;
        }
        int ref = ~word;
        if ((ref & DENSE) != 0) {
            long[] held = bits.tier(ref & ~DENSE, tier);
            int outLo = Integer.MAX_VALUE;
            int outHi = 0;
            for (int i = lo, end = Math.min(hi, held.length); i < end; i++) {
                long w = in[i] & held[i];
                if (w != 0) {
                    out[i] = w;
                    outLo = Math.min(outLo, i);
                    outHi = i + 1;
                }
            }
            return outLo == Integer.MAX_VALUE ? 0 : (long) outLo << 32 | outHi;
        }
        lists.intersect(ref, tier, in, out);
        int outLo = lo;
        while (outLo < hi && out[outLo] == 0) {
            outLo++;
        }
        if (outLo == hi) {
            return 0;
        }
        int outHi = hi;
        while (out[outHi - 1] == 0) {
            outHi--;
        }
        return (long) outLo << 32 | outHi;
    }

    /**
     * True when {@code child}'s owners on {@code tier} are provably a superset of {@code node}'s: the same single
     * code, the same list in the same order, or equal bitsets on the tier. A frame whose workers all hold
     * {@code node} on the tier then keeps every one of them at {@code child} without an intersection (the run of
     * blocks with the same holders that Dynamo's compressed tree stores as one edge, found while walking instead
     * of kept up to date on every write). False only means "not proven": the caller intersects.
     */
    boolean covers(int child, int node, int tier) {
        return sameCodes(child, node, tier);
    }

    /** The {@link #same} bits of nodes {@code 64 * word .. 64 * word + 63} of node page {@code page}. */
    long sameAsPrevious(int page, int word) {
        return same[page][word];
    }

    /** {@link #changed(int)} when {@code didChange}; returns it. */
    private boolean changed(int node, boolean didChange) {
        if (didChange) {
            changed(node);
        }
        return didChange;
    }

    /**
     * From now on, changes of nodes from {@link #refreshSame}'s last end on leave the {@link #same} bits alone:
     * recovery's staging ({@link NodeStore#deferPrefixes}) adds every owner of a new node in a burst, and sets the
     * bits of a frame's nodes once, in id order, when the frame is staged.
     */
    void deferSame() {
        sameFrom = 0;
    }

    /** Ends {@link #deferSame} (after a last {@link #refreshSame} over every node). */
    void undeferSame() {
        sameFrom = Integer.MAX_VALUE;
    }

    /** Sets the {@link #same} bits of the nodes from the last call's {@code end} to this one's from their owners. */
    void refreshSame(int end) {
        for (int node = sameFrom; node < end; node++) {
            setSame(node, node > 0 && sameCodes(node, node - 1, ALL_TIERS));
        }
        sameFrom = Math.max(sameFrom, end);
    }

    /** Refreshes the {@link #same} bits a change of {@code node}'s owners may have changed: its own and the next node's. */
    private void changed(int node) {
        if (node >= sameFrom) {
            return; // deferred: refreshSame sets it
        }
        setSame(node, node > 0 && sameCodes(node, node - 1, ALL_TIERS));
        int next = node + 1;
        if (next >>> NodeStore.PAGE_BITS < words.length && words[next >>> NodeStore.PAGE_BITS] != null) {
            setSame(next, sameCodes(next, node, ALL_TIERS));
        }
    }

    /**
     * Both non-empty and provably the same codes: the same word (one code, or the same packed codes: two nodes never
     * share a list or a bitset), the same list in the same order, or equal bitsets on {@code tier} ({@link #ALL_TIERS}:
     * on every tier). False only means "not proven".
     */
    private boolean sameCodes(int a, int b, int tier) {
        int wa = word(a);
        int wb = word(b);
        if (wa == wb) {
            return wa != FREE;
        }
        if (wa >= 0 || wb >= 0 || wa == FREE || wb == FREE) {
            return false;
        }
        int refA = ~wa;
        int refB = ~wb;
        if ((refA & DENSE) != 0 && (refB & DENSE) != 0) {
            return tier == ALL_TIERS
                    ? bits.sameCodes(refA & ~DENSE, refB & ~DENSE)
                    : Arrays.equals(bits.tier(refA & ~DENSE, tier), bits.tier(refB & ~DENSE, tier));
        }
        return (refA & DENSE) == 0 && (refB & DENSE) == 0 && lists.sameCodes(refA, refB);
    }

    private void setSame(int node, boolean value) {
        NodeStore.setBit(same, node, value);
    }

    /** A node's owner word: the first of the two reads {@link #intersect} makes (see {@link #touch}). */
    int wordOf(int node) {
        return word(node);
    }

    /**
     * Reads what {@link #intersect} reads behind an owner word (a list's count, or the tier's bitset and its first
     * word) and returns it, so the matcher can issue these loads for a batch of probed nodes at once, where their
     * cache misses overlap, before its walk needs them one after another.
     */
    long touch(int word, int tier) {
        if (word >= 0 || word == FREE) {
            return word;
        }
        int ref = ~word;
        if ((ref & DENSE) != 0) {
            long[] held = bits.tier(ref & ~DENSE, tier);
            return held.length == 0 ? 0 : held[0];
        }
        return lists.count(ref);
    }

    /** Copies one slot's bit from {@code in} to {@code out} and widens the packed range {@code range} to it. */
    private static long keep(int slot, long[] in, long[] out, int lo, int hi, long range) {
        int w = slot >>> 6;
        long bit = 1L << slot;
        if (w < lo || w >= hi || (in[w] & bit) == 0) {
            return range;
        }
        out[w] |= bit;
        int outLo = (int) (range >>> 32);
        int outHi = (int) range;
        return outLo >= outHi ? (long) w << 32 | (w + 1) : (long) Math.min(outLo, w) << 32 | Math.max(outHi, w + 1);
    }

    private int word(int node) {
        return (int) words[node >>> NodeStore.PAGE_BITS][
                NodeStore.STRIDE * (node & NodeStore.OFFSET_MASK) + NodeStore.OWNERS];
    }

    private void setWord(int node, int word) {
        long[] page = words[node >>> NodeStore.PAGE_BITS];
        int at = NodeStore.STRIDE * (node & NodeStore.OFFSET_MASK) + NodeStore.OWNERS;
        page[at] = page[at] & ~0xFFFFFFFFL | (word & 0xFFFFFFFFL);
    }
}

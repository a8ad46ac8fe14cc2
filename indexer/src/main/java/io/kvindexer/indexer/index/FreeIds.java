package io.kvindexer.indexer.index;

import java.util.BitSet;

/**
 * The free node ids below the high-water mark, kept so that a new chain can be laid out in consecutive ids. A walk
 * goes down a chain without a probe only where each block's id is the one after its parent's ({@link NodeStore},
 * "in line"); an index whose engines evict frees ids all over, and handed out last-freed-first they scatter every
 * chain stored later over the holes, which the walk then pays for with a probe at every seam.
 *
 * <p>So a chain continues in the id after its previous block when that one is free ({@link #take(int)}), and starts
 * where a run of free ids is long enough for it ({@link #findRun}). The free ids are a bitset (a bit per id below
 * the high-water mark).
 *
 * <p>Not thread-safe: the store's writer owns it.
 */
final class FreeIds {

    /** ids a run search passes over at most (a bitset read skips 64 at a time where none is free) */
    private static final int SCAN_IDS = 1 << 14;
    /** runs a search looks at at most: free ids that are all single would otherwise cost a look each */
    private static final int SCAN_RUNS = 64;

    private final BitSet free = new BitSet();
    private int count;
    /** where the next run search begins: searches move on through the ids instead of rereading the same ones */
    private int rover;

    int count() {
        return count;
    }

    boolean isEmpty() {
        return count == 0;
    }

    void add(int id) {
        free.set(id);
        count++;
    }

    /** Takes {@code id} when it is free. */
    boolean take(int id) {
        if (id < 0 || !free.get(id)) {
            return false;
        }
        free.clear(id);
        count--;
        return true;
    }

    /**
     * The first id of a run of at least {@code wanted} free ids, or of a free run that reaches {@code highWater} (the
     * fresh ids go on from there); else the start of the longest run seen, when {@code orLongest}; else -1. Reads at
     * most {@link #SCAN_IDS} ids and {@link #SCAN_RUNS} runs, from where the last search stopped, but with
     * {@code orLongest} goes on until it saw a free id: it finds one whenever any id below {@code highWater} is free
     * (a bitset read passes 64 taken ids at a time). Takes nothing.
     */
    int findRun(int wanted, int highWater, boolean orLongest) {
        int best = -1;
        int bestLength = 0;
        int from = rover < highWater ? rover : 0;
        boolean wrapped = from == 0;
        // with orLongest, a search goes on past its bounds until it saw a free id (at most once round the ids)
        for (int passed = 0, runs = 0; (passed < SCAN_IDS && runs < SCAN_RUNS) || (orLongest && best < 0); runs++) {
            int start = free.nextSetBit(from);
            if (start < 0 || start >= highWater) {
                if (wrapped) {
                    break;
                }
                wrapped = true;
                passed += highWater - from;
                from = 0;
                continue;
            }
            int end = Math.min(free.nextClearBit(start), highWater);
            passed += end - from;
            from = end;
            if (end - start >= wanted || end == highWater) {
                rover = end;
                return start;
            }
            if (end - start > bestLength) {
                best = start;
                bestLength = end - start;
            }
        }
        rover = from;
        return orLongest ? best : -1;
    }
}

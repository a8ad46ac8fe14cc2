package io.kvindexer.indexer.index;

import java.util.Arrays;
import java.util.BitSet;

/**
 * The free node ids below the high-water mark, kept so that a new chain can be laid out in consecutive ids. A walk
 * goes down a chain without a probe only where each block's id is the one after its parent's ({@link NodeStore},
 * "in line"); an index whose engines evict frees ids all over, and handed out last-freed-first they scatter every
 * chain stored later over the holes, which the walk then pays for with a probe at every seam.
 *
 * <p>So a chain continues in the id after its previous block when that one is free ({@link #take(int)}), and starts
 * where a run of free ids is long enough for it ({@link #findRun}). Membership is a bitset (a bit per id below the
 * high-water mark); any free id comes off a stack whose stale entries (ids taken since by {@link #take(int)}) are
 * skipped, and which is rebuilt from the bitset when they outnumber the free ids.
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
    private int[] stack = new int[16];
    private int stackSize;
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
        if (stackSize == stack.length) {
            if (stackSize > 2 * count + 64) {
                rebuildStack(); // (it holds id)
                return;
            }
            stack = Arrays.copyOf(stack, stackSize * 2);
        }
        stack[stackSize++] = id;
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

    /** Takes some free id, the last freed that is still free (the caller checked there is one). */
    int takeAny() {
        while (true) {
            int id = stack[--stackSize];
            if (take(id)) {
                return id;
            }
        }
    }

    /**
     * The first id of a run of at least {@code wanted} free ids, or of a free run that reaches {@code highWater} (the
     * fresh ids go on from there); else the start of the longest run seen, when {@code orLongest}; else -1. Reads at
     * most {@link #SCAN_IDS} ids and {@link #SCAN_RUNS} runs, from where the last search stopped. Takes nothing.
     */
    int findRun(int wanted, int highWater, boolean orLongest) {
        int best = -1;
        int bestLength = 0;
        int from = rover < highWater ? rover : 0;
        boolean wrapped = from == 0;
        for (int passed = 0, runs = 0; passed < SCAN_IDS && runs < SCAN_RUNS; runs++) {
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

    private void rebuildStack() {
        stackSize = 0;
        if (stack.length < count) {
            stack = new int[Math.max(16, count * 2)];
        }
        // highest first, so the lowest ids come off first
        for (int id = free.previousSetBit(free.length() - 1); id >= 0; id = free.previousSetBit(id - 1)) {
            stack[stackSize++] = id;
        }
    }
}

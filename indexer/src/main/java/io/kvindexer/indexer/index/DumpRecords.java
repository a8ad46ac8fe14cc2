package io.kvindexer.indexer.index;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import java.util.Arrays;

/**
 * Records of a dump in its order, each a block and its owners, as recovery stages them into a detached index
 * ({@link ModelIndex#stageRecords}): one verified frame of a binary dump. Record {@code i} owns
 * {@code ownerCodes[ownersEnd[i - 1], ownersEnd[i])} (from 0 for the first), each a {@link MembershipCode} with a
 * worker ref, an index into {@code workers}, in place of the slot. Built by {@link Builder}; never changed once built.
 */
public record DumpRecords(
        WorkerKey[] workers,
        int count,
        boolean[] hasParent,
        long[] parentBlockHashes,
        long[] blockHashes,
        long[] localHashes,
        int[] ownersEnd,
        int[] ownerCodes) {

    /** Collects records one block and owner at a time; {@link #build} hands them on and starts afresh. */
    public static final class Builder {

        /**
         * Room for a whole frame of a binary dump (64 KB, a record at least 19 bytes) from the start: growth that
         * happens only in a recovery's first frame is a branch the JIT compiles out, then traps on in the next one.
         */
        private static final int INITIAL = 4096;

        private boolean[] hasParent = new boolean[INITIAL];
        private long[] parents = new long[INITIAL];
        private long[] blocks = new long[INITIAL];
        private long[] locals = new long[INITIAL];
        private int[] ownersEnd = new int[INITIAL];
        private int[] codes = new int[2 * INITIAL];
        private int count;
        private int owners;

        public void block(boolean hasParent, long parentBlockHash, long blockHash, long localHash) {
            if (count == blocks.length) {
                int n = count * 2;
                this.hasParent = Arrays.copyOf(this.hasParent, n);
                parents = Arrays.copyOf(parents, n);
                blocks = Arrays.copyOf(blocks, n);
                locals = Arrays.copyOf(locals, n);
                ownersEnd = Arrays.copyOf(ownersEnd, n);
            }
            this.hasParent[count] = hasParent;
            parents[count] = hasParent ? parentBlockHash : 0L;
            blocks[count] = blockHash;
            locals[count] = localHash;
            ownersEnd[count] = owners;
            count++;
        }

        /** An owner of the block added last. */
        public void owner(int workerRef, StorageTier tier) {
            if (owners == codes.length) {
                codes = Arrays.copyOf(codes, owners * 2);
            }
            codes[owners++] = MembershipCode.of(workerRef, tier.ordinal());
            ownersEnd[count - 1] = owners;
        }

        public boolean isEmpty() {
            return count == 0;
        }

        /** The records so far (with the workers their refs name); the builder is empty afterwards. */
        public DumpRecords build(WorkerKey[] workers) {
            DumpRecords out = new DumpRecords(
                    workers,
                    count,
                    Arrays.copyOf(hasParent, count),
                    Arrays.copyOf(parents, count),
                    Arrays.copyOf(blocks, count),
                    Arrays.copyOf(locals, count),
                    Arrays.copyOf(ownersEnd, count),
                    Arrays.copyOf(codes, owners));
            count = 0;
            owners = 0;
            return out;
        }
    }
}

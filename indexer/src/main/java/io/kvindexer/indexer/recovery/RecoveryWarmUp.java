package io.kvindexer.indexer.recovery;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.dump.BinaryDumpWriter;
import io.kvindexer.indexer.index.Indexers;
import it.unimi.dsi.fastutil.HashCommon;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.List;

/**
 * What a restarted replica does while it waits out its recovery delay: a small made-up binary dump goes through the
 * reader and a staging that is never installed ({@link BinaryDumpApplier#stage}, whose result is dropped), so that
 * the JIT has compiled, or at least queued, what a peer's dump will run instead of its first frames running in the
 * interpreter. Nothing of it reaches a live index. It runs beside the client's set-up (a thread of its own), and a
 * round starts only while more than the last one's time is left of the delay (each round is faster than the one
 * before, a warm one takes a few ms), so it holds back the first request by a round at most.
 */
final class RecoveryWarmUp {

    private static final System.Logger LOG = System.getLogger(RecoveryWarmUp.class.getName());

    /** chains of blocks; each shares its first half with the chain before, so most blocks have two owners */
    private static final int CHAINS = 256;

    private static final int DEPTH = 64;
    /** the chains' owners, in turn */
    private static final int CHAIN_WORKERS = 8;
    /**
     * One long chain whose blocks have 1 to {@value #WIDE_OWNERS} owners (two blocks in a row alike): a peer's popular
     * prefixes grow a block's owners past packed words and lists into bitsets, and their runs are longer than a pair's.
     */
    private static final int WIDE_DEPTH = 160;

    /** past the 63 codes an owner list holds at most (OwnerLists.MAX) */
    private static final int WIDE_OWNERS = 72;
    /** parents with two children alike in content (the same local hash) but not in block hash */
    private static final int TWINS = 16;
    /** roots whose block-hash table home is the table's last slot, so their probes wrap around to slot 0 */
    private static final int WRAPPING = 8;

    private static final int WORKERS = WIDE_OWNERS;
    /** the dump's blocks: a pair of chains holds a whole chain and half of one */
    static final int BLOCKS = CHAINS / 2 * (DEPTH + DEPTH / 2) + WIDE_DEPTH + 2 * TWINS + WRAPPING;
    /** and its memberships: the shared halves have two owners */
    static final int MEMBERSHIPS = CHAINS / 2 * 2 * DEPTH + wideMemberships() + 2 * TWINS + WRAPPING;
    /** the time a first, cold round is assumed to take (a loaded 2-core machine: 200-300 ms) */
    private static final long FIRST_ROUND_NANOS = 250_000_000L;

    private RecoveryWarmUp() {}

    /** Stages the made-up dump into throwaway indexes over and over until {@code untilNanos} is near. */
    static void run(Indexers indexers, long untilNanos) {
        if (untilNanos - System.nanoTime() <= FIRST_ROUND_NANOS) {
            return;
        }
        try {
            byte[] dump = dump();
            long last = FIRST_ROUND_NANOS;
            int rounds = 0;
            while (untilNanos - System.nanoTime() > last) {
                long t0 = System.nanoTime();
                BinaryDumpApplier.stage(
                        new ByteArrayInputStream(dump),
                        indexers,
                        10_000,
                        "the recovery warm-up",
                        Integer.toString(BLOCKS));
                last = System.nanoTime() - t0;
                rounds++;
            }
            LOG.log(System.Logger.Level.DEBUG, "recovery warm-up: {0} rounds", rounds);
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "recovery warm-up stopped: {0}", e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * The made-up dump: one section, parents first, as a peer's walk emits it. Its shape takes the branches a real
     * dump takes (see the constants): a branch the JIT's profile never saw taken is compiled out, and taken later, in
     * the real recovery, it throws the compiled code away (a trap) and compiles it again on the clock.
     */
    static byte[] dump() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        WorkerKey[] workers = new WorkerKey[WORKERS];
        for (int w = 0; w < WORKERS; w++) {
            workers[w] = new WorkerKey(1_000 + w, 0);
        }
        try (BinaryDumpWriter writer = new BinaryDumpWriter(out, List.of())) {
            writer.beginIndex("kv-indexer-warm-up", "warm-up", 16);
            for (int r = 0; r < WRAPPING; r++) {
                // the table's slot hash is HashCommon.mix of the block hash; its top 32 bits all ones: the last home
                long block = HashCommon.invMix(0xFFFF_FFFF_0000_0000L | r);
                writer.membership(workers[r], StorageTier.DEVICE, false, 0, block, HashCommon.murmurHash3(~block));
            }
            // the rare shapes first: the JIT compiles the hot methods during the first round, with what it saw so far
            long wideParent = 0;
            for (int d = 0; d < WIDE_DEPTH; d++) {
                long block = HashCommon.murmurHash3((1L << 40) + d);
                for (int w = 0; w < wideOwners(d); w++) {
                    writer.membership(
                            workers[w], StorageTier.DEVICE, d > 0, wideParent, block, HashCommon.murmurHash3(~block));
                }
                wideParent = block;
            }
            for (int c = 0; c < CHAINS; c++) {
                long parent = 0;
                for (int d = 0; d < DEPTH; d++) {
                    // the first half of a chain is the previous chain's (an even chain starts a pair)
                    int owner = d < DEPTH / 2 ? c & ~1 : c;
                    long block = chainBlock(owner, d);
                    long local = HashCommon.murmurHash3(~block);
                    boolean shared = d < DEPTH / 2 && (c & 1) == 1;
                    if (!shared) {
                        writer.membership(workers[c % CHAIN_WORKERS], StorageTier.DEVICE, d > 0, parent, block, local);
                        if (d < DEPTH / 2) {
                            writer.membership(
                                    workers[(c + 1) % CHAIN_WORKERS], StorageTier.DEVICE, d > 0, parent, block, local);
                        }
                    }
                    parent = block;
                }
            }
            for (int t = 0; t < TWINS; t++) {
                long twinParent = chainBlock(0, t);
                long local = HashCommon.murmurHash3((2L << 40) + t);
                for (int k = 0; k < 2; k++) {
                    long block = HashCommon.murmurHash3((3L << 40) + 2 * t + k);
                    writer.membership(workers[k], StorageTier.DEVICE, true, twinParent, block, local);
                }
            }
            writer.endIndex();
        }
        return out.toByteArray();
    }

    private static long chainBlock(int chain, int depth) {
        return HashCommon.murmurHash3(chain * (long) DEPTH + depth);
    }

    /** The wide chain's block at {@code depth} has this many owners, the same as its parent's or one more. */
    private static int wideOwners(int depth) {
        return 1 + depth / 2 % WIDE_OWNERS;
    }

    private static int wideMemberships() {
        int n = 0;
        for (int d = 0; d < WIDE_DEPTH; d++) {
            n += wideOwners(d);
        }
        return n;
    }
}

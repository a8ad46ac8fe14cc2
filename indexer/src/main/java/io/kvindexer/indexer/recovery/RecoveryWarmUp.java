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
    private static final int WORKERS = 8;
    /** the dump's blocks: a pair of chains holds a whole chain and half of one */
    static final int BLOCKS = CHAINS / 2 * (DEPTH + DEPTH / 2);
    /** and its memberships: the shared halves have two owners */
    static final int MEMBERSHIPS = CHAINS / 2 * 2 * DEPTH;
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

    /** The made-up dump: one section, parents first, as a peer's walk emits it. */
    static byte[] dump() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        WorkerKey[] workers = new WorkerKey[WORKERS];
        for (int w = 0; w < WORKERS; w++) {
            workers[w] = new WorkerKey(1_000 + w, 0);
        }
        try (BinaryDumpWriter writer = new BinaryDumpWriter(out, List.of())) {
            writer.beginIndex("kv-indexer-warm-up", "warm-up", 16);
            for (int c = 0; c < CHAINS; c++) {
                long parent = 0;
                for (int d = 0; d < DEPTH; d++) {
                    // the first half of a chain is the previous chain's (an even chain starts a pair)
                    int owner = d < DEPTH / 2 ? c & ~1 : c;
                    long block = HashCommon.murmurHash3(owner * (long) DEPTH + d);
                    long local = HashCommon.murmurHash3(~block);
                    boolean shared = d < DEPTH / 2 && (c & 1) == 1;
                    if (!shared) {
                        writer.membership(workers[c % WORKERS], StorageTier.DEVICE, d > 0, parent, block, local);
                        if (d < DEPTH / 2) {
                            writer.membership(
                                    workers[(c + 1) % WORKERS], StorageTier.DEVICE, d > 0, parent, block, local);
                        }
                    }
                    parent = block;
                }
            }
            writer.endIndex();
        }
        return out.toByteArray();
    }
}

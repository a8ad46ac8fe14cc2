package io.kvindexer.bench;

import io.kvindexer.indexer.hash.BlockHasher;
import it.unimi.dsi.fastutil.longs.Long2IntLinkedOpenHashMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Random;

/**
 * A trace turned into what an indexer sees, in the shape of Dynamo's {@code mooncake_bench}: requests partitioned
 * over workers with a seeded RNG, each worker's requests run through a small LRU engine with prefix caching that
 * emits Stored (with parent) and Removed events, and the per-worker timelines merged (queries before events at
 * equal times). Built once, before anything is timed; the replay and the floor walk the same {@link #ops()}.
 *
 * <p>Tokens are synthesised before the replay (about 0.5 KB per query or stored block at block size 128, so give
 * the JVM heap for it): an engine block made from trace id {@code h} is {@code blockSize} copies
 * of the token {@code (int) h}, so query hashes and event hashes agree. Each 512-token trace block becomes
 * {@code traceBlockSize / blockSize} engine blocks; each request also caches {@code output_length / blockSize}
 * generated blocks with ids of their own after its prompt.
 */
public final class Workload {

    public enum Kind {
        QUERY,
        STORED,
        REMOVED
    }

    /**
     * One timeline entry.
     *
     * @param timeMs      trace time
     * @param seqHashes   engine sequence hashes (Stored, Removed); null for a query
     * @param tokenValues per block, the token value it is made of (Stored, query); null for Removed
     * @param tokens      the synthesised tokens of those blocks, made before anything is timed (Stored, query)
     */
    public record Op(
            long timeMs,
            Kind kind,
            int worker,
            long[] seqHashes,
            boolean hasParent,
            long parent,
            int[] tokenValues,
            int[] tokens) {
        public int blocks() {
            return kind == Kind.QUERY ? tokenValues.length : seqHashes.length;
        }
    }

    /** How to expand the trace into engines (the flags of {@link TraceBench}). */
    public record Spec(int traceBlockSize, int blockSize, int workers, int engineBlocks, long seed) {
        public Spec {
            if (blockSize <= 0 || traceBlockSize <= 0 || traceBlockSize % blockSize != 0) {
                throw new IllegalArgumentException("--trace-block-size (" + traceBlockSize
                        + ") must be a positive multiple of --block-size (" + blockSize + ")");
            }
            if (workers <= 0 || engineBlocks <= 0) {
                throw new IllegalArgumentException("--workers and --engine-blocks must be positive");
            }
        }
    }

    private final Spec spec;
    private final Op[] ops;
    private final long expectedMemberships;
    /** Blocks of all ops of each kind, indexed by {@link Kind#ordinal()}. */
    private final long[] blocksByKind = new long[Kind.values().length];

    private long[][] localHashes;

    /** @param ops in time order */
    private Workload(Spec spec, Op[] ops, long expectedMemberships) {
        this.spec = spec;
        this.ops = ops;
        this.expectedMemberships = expectedMemberships;
        for (Op op : ops) {
            blocksByKind[op.kind().ordinal()] += op.blocks();
        }
    }

    public static Workload build(MooncakeTrace trace, Spec spec) {
        int chunks = spec.traceBlockSize() / spec.blockSize();
        Random rng = new Random(spec.seed());
        List<List<MooncakeTrace.Request>> perWorker = new ArrayList<>();
        for (int w = 0; w < spec.workers(); w++) {
            perWorker.add(new ArrayList<>());
        }
        for (MooncakeTrace.Request r : trace.requests()) {
            perWorker.get(rng.nextInt(spec.workers())).add(r);
        }
        long nextOutputId = trace.maxId() + 1;
        List<Op> all = new ArrayList<>();
        long expected = 0;
        for (int w = 0; w < spec.workers(); w++) {
            List<MooncakeTrace.Request> mine = perWorker.get(w);
            mine.sort(Comparator.comparingLong(MooncakeTrace.Request::timestampMs));
            LruEngine engine = new LruEngine(w, spec.engineBlocks());
            for (MooncakeTrace.Request r : mine) {
                int prompt = r.hashIds().length * chunks;
                int output = r.outputLength() / spec.blockSize();
                int[] values = new int[prompt + output];
                for (int i = 0; i < prompt; i++) {
                    values[i] = (int) r.hashIds()[i / chunks];
                }
                for (int i = prompt; i < values.length; i++) {
                    values[i] = (int) nextOutputId++;
                }
                int[] promptValues = Arrays.copyOf(values, prompt);
                all.add(new Op(
                        r.timestampMs(),
                        Kind.QUERY,
                        w,
                        null,
                        false,
                        0,
                        promptValues,
                        tokens(promptValues, spec.blockSize())));
                engine.serve(r.timestampMs(), values, all, spec.blockSize());
            }
            expected += engine.size();
        }
        // stable sort: per worker the generation order survives; queries go first at equal times
        all.sort(Comparator.comparingLong(Op::timeMs).thenComparingInt(o -> o.kind() == Kind.QUERY ? 0 : 1));
        return new Workload(spec, all.toArray(Op[]::new), expected);
    }

    /** The chained engine sequence hash of a block (content-addressed like vLLM's: equal prefixes, equal hashes). */
    static long chain(long parent, int tokenValue) {
        long x = parent * 0x9E3779B97F4A7C15L + tokenValue + 0x632BE59BD9B4E019L;
        x ^= x >>> 33;
        x *= 0xff51afd7ed558ccdL;
        x ^= x >>> 33;
        x *= 0xc4ceb9fe1a85ec53L;
        x ^= x >>> 33;
        return x;
    }

    /** The tokens of {@code op}'s blocks: block {@code i} is {@code blockSize} copies of {@code tokenValues[i]}. */
    public static int[] tokens(int[] tokenValues, int blockSize) {
        int[] out = new int[tokenValues.length * blockSize];
        for (int i = 0; i < tokenValues.length; i++) {
            Arrays.fill(out, i * blockSize, (i + 1) * blockSize, tokenValues[i]);
        }
        return out;
    }

    /**
     * The local hash of every block of every query and Stored op (null for Removed), indexed like {@link #ops()}:
     * computed once, on first use, for the {@code --prehashed} mode that leaves token hashing out of the timing.
     */
    public synchronized long[][] localHashes() {
        if (localHashes == null) {
            long[][] out = new long[ops.length][];
            for (int i = 0; i < ops.length; i++) {
                if (ops[i].tokens() != null) {
                    out[i] = BlockHasher.localHashes(ops[i].tokens(), spec.blockSize(), BlockHasher.BASE_SEED);
                }
            }
            localHashes = out;
        }
        return localHashes;
    }

    public Spec spec() {
        return spec;
    }

    public Op[] ops() {
        return ops;
    }

    /** Trace time from the first op to the last. */
    public long spanMs() {
        return ops.length == 0 ? 0 : ops[ops.length - 1].timeMs() - ops[0].timeMs();
    }

    public long queries() {
        return Arrays.stream(ops).filter(o -> o.kind() == Kind.QUERY).count();
    }

    public long queryBlocks() {
        return blocksByKind[Kind.QUERY.ordinal()];
    }

    public long storedBlocks() {
        return blocksByKind[Kind.STORED.ordinal()];
    }

    public long removedBlocks() {
        return blocksByKind[Kind.REMOVED.ordinal()];
    }

    /** Dynamo's count: query hashes + hashes in Stored and Removed. */
    public long blockOps() {
        return Arrays.stream(blocksByKind).sum();
    }

    /** (worker, block) pairs the simulated engines hold at the end: what a correct index must hold too. */
    public long expectedMemberships() {
        return expectedMemberships;
    }

    /** Deadline of every op, in nanoseconds from the start, with the trace span squeezed into {@code windowMs}. */
    public long[] deadlines(double windowMs) {
        long[] out = new long[ops.length];
        if (ops.length == 0) {
            return out;
        }
        long t0 = ops[0].timeMs();
        long span = spanMs();
        double scale = span == 0 ? 0 : windowMs * 1e6 / span;
        for (int i = 0; i < ops.length; i++) {
            out[i] = Math.round((ops[i].timeMs() - t0) * scale);
        }
        return out;
    }

    /**
     * One engine's GPU block pool with prefix caching and LRU eviction. A request touches the blocks it already
     * holds, evicts least-recently-used blocks to make room (one Removed), caches its new blocks (one Stored per run
     * of consecutive new blocks, with the parent), and finally re-touches its blocks tail first, so that a chain's
     * tail is evicted before its head (as vLLM frees blocks in reverse order).
     */
    static final class LruEngine {
        private final int worker;
        private final int capacity;
        private final Long2IntLinkedOpenHashMap cache;

        LruEngine(int worker, int capacity) {
            this.worker = worker;
            this.capacity = capacity;
            this.cache = new Long2IntLinkedOpenHashMap(Math.min(capacity, 1 << 16));
        }

        int size() {
            return cache.size();
        }

        void serve(long timeMs, int[] allValues, List<Op> out, int blockSize) {
            int n = Math.min(allValues.length, capacity);
            long[] seq = new long[n];
            long parent = 0;
            int missing = 0;
            for (int i = 0; i < n; i++) {
                seq[i] = chain(parent, allValues[i]);
                parent = seq[i];
                if (cache.containsKey(seq[i])) {
                    cache.getAndMoveToLast(seq[i]);
                } else {
                    missing++;
                }
            }
            int evict = cache.size() + missing - capacity;
            if (evict > 0) {
                long[] removed = new long[evict];
                for (int i = 0; i < evict; i++) {
                    removed[i] = cache.firstLongKey();
                    cache.removeFirstInt();
                }
                out.add(new Op(timeMs, Kind.REMOVED, worker, removed, false, 0, null, null));
            }
            int runStart = -1;
            for (int i = 0; i <= n; i++) {
                boolean fresh = i < n && !cache.containsKey(seq[i]);
                if (fresh) {
                    cache.put(seq[i], allValues[i]);
                    if (runStart < 0) {
                        runStart = i;
                    }
                } else if (runStart >= 0) {
                    int[] values = Arrays.copyOfRange(allValues, runStart, i);
                    out.add(new Op(
                            timeMs,
                            Kind.STORED,
                            worker,
                            Arrays.copyOfRange(seq, runStart, i),
                            runStart > 0,
                            runStart > 0 ? seq[runStart - 1] : 0,
                            values,
                            tokens(values, blockSize)));
                    runStart = -1;
                }
            }
            for (int i = n - 1; i >= 0; i--) {
                cache.getAndMoveToLast(seq[i]);
            }
        }
    }
}

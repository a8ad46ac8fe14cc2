package io.kvindexer.indexer.ingest;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.zeromq.ZContext;

/**
 * The threads every listener of the process shares: a fixed set of {@link Poller}s that read the engine connections
 * (a listener costs one TCP connection and a small record, not a thread) and a fixed pool for replays, which block
 * on an engine's answer and so never run on a poller. The thread count does not depend on how many engines there are.
 */
public final class IngestPollers implements AutoCloseable {

    /**
     * Pollers by default: one core left to the index writer, at most four. A poller decodes ~10 M block events/s, twice
     * what a writer applies, and one more than the spare cores only takes the writer's core: on 2 cores with 1,024
     * engines a second poller had the writer wait for a core 27 % of the window instead of 19 % (benchmarks log).
     */
    public static final int DEFAULT_POLLERS =
            Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors() - 1));

    private static IngestPollers shared;

    private final ZContext context;
    private final Poller[] pollers;
    private final ExecutorService replays;
    private final InflightBytes inflight;
    private final HostLookup lookup;

    /**
     * @param pollerCount    poller threads
     * @param replayThreads  threads for replays (a replay waits for a {@link ReplayPermits} permit on one)
     * @param inflight       the budget of bytes handed to the index and not yet applied
     */
    public IngestPollers(ZContext context, int pollerCount, int replayThreads, InflightBytes inflight) {
        this(context, pollerCount, replayThreads, inflight, Poller.WAIT_MILLIS);
    }

    /** As above, with the pollers' idle wait in the selector (a test's seam: commands must not wait for it). */
    IngestPollers(ZContext context, int pollerCount, int replayThreads, InflightBytes inflight, long waitMillis) {
        this(context, pollerCount, replayThreads, inflight, waitMillis, HostLookup.SYSTEM);
    }

    /** As above, with how engines' host names are looked up (a test's seam: a lookup that blocks). */
    IngestPollers(
            ZContext context,
            int pollerCount,
            int replayThreads,
            InflightBytes inflight,
            long waitMillis,
            HostLookup lookup) {
        if (pollerCount < 1 || replayThreads < 1) {
            throw new IllegalArgumentException("at least one poller and one replay thread");
        }
        this.context = context;
        this.inflight = inflight;
        this.lookup = lookup;
        this.pollers = new Poller[pollerCount];
        for (int i = 0; i < pollerCount; i++) {
            pollers[i] = new Poller(inflight, "kv-ingest-poller-" + i, waitMillis);
            pollers[i].start();
        }
        AtomicInteger n = new AtomicInteger();
        this.replays = Executors.newFixedThreadPool(replayThreads, r -> {
            Thread t = new Thread(r, "kv-ingest-replay-" + n.getAndIncrement());
            t.setDaemon(true);
            return t;
        });
    }

    /** The process's default set (on {@link ZmqContext#shared()}), made on first use. */
    public static synchronized IngestPollers shared() {
        ZContext context = ZmqContext.shared();
        if (shared == null || shared.context != context) {
            shared = new IngestPollers(
                    context, DEFAULT_POLLERS, ReplayPermits.DEFAULT, new InflightBytes(InflightBytes.defaultBudget()));
        }
        return shared;
    }

    public InflightBytes inflight() {
        return inflight;
    }

    /** How the pollers' engines' host names are looked up (off the pollers). */
    HostLookup lookup() {
        return lookup;
    }

    /** The poller serving the fewest streams. */
    Poller leastLoaded() {
        Poller best = pollers[0];
        for (Poller p : pollers) {
            if (p.size() < best.size()) {
                best = p;
            }
        }
        return best;
    }

    void replay(Runnable task) {
        replays.execute(task);
    }

    @Override
    public void close() {
        for (Poller p : pollers) {
            p.close();
        }
        replays.shutdownNow();
    }
}

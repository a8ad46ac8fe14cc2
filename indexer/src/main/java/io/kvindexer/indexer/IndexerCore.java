package io.kvindexer.indexer;

import io.kvindexer.indexer.expiry.BlockExpiry;
import io.kvindexer.indexer.http.AccessLog;
import io.kvindexer.indexer.http.AccessLogSettings;
import io.kvindexer.indexer.http.IndexerRouting;
import io.kvindexer.indexer.http.RequestTracing;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.ingest.EngineListener;
import io.kvindexer.indexer.ingest.InflightBytes;
import io.kvindexer.indexer.ingest.IngestPollers;
import io.kvindexer.indexer.ingest.ListenerOptions;
import io.kvindexer.indexer.ingest.ReadyGate;
import io.kvindexer.indexer.ingest.ReplayPermits;
import io.kvindexer.indexer.ingest.ZmqContext;
import io.kvindexer.indexer.metrics.IndexerMetrics;
import io.kvindexer.indexer.recovery.StartupGate;
import io.kvindexer.indexer.registry.ListenerFactory;
import io.kvindexer.indexer.registry.PeerRegistry;
import io.kvindexer.indexer.registry.Registration;
import io.kvindexer.indexer.registry.RegistryException;
import io.kvindexer.indexer.registry.WorkerEntry;
import io.kvindexer.indexer.registry.WorkerRegistry;
import java.io.IOException;

/**
 * The wiring behind the HTTP server: index, registry with its engine listeners, startup gate and metrics, with the
 * {@code --workers} registered. {@link IndexerApp} puts its server and peer recovery on top; tests serve the
 * {@link #components()} through Helidon's harness instead.
 */
public final class IndexerCore implements AutoCloseable {

    /** sockets of the shared context kept for what is not a listener (replays aside): simulators in tests, probes */
    private static final int SOCKETS_KEPT = 64;

    private final IndexerRouting.Components components;
    private final IngestPollers pollers;
    /** null unless --block-ttl or --max-blocks-per-worker is given */
    private final BlockExpiry expiry;
    /** null without --access-log */
    private final AccessLog accessLog;
    /** null when requests get no spans */
    private final RequestTracing tracing;

    private IndexerCore(IndexerConfig config) throws RegistryException {
        IndexerMetrics metrics = new IndexerMetrics();
        accessLog = openAccessLog(config.accessLog(), metrics); // first: a file it cannot open stops the start
        tracing = RequestTracing.start(config.tracing());
        if (tracing != null && config.tracing().export()) {
            metrics.bindTelemetryLosses(tracing::reportLosses);
        }
        ReadyGate readyGate = new ReadyGate();
        expiry = config.expiry().enabled() ? new BlockExpiry(config.expiry()) : null;
        Indexers indexers = new Indexers(config.indexOptions(), expiry);
        int replays = config.limits().maxConcurrentReplays();
        // a running replay is one DEALER (a listener's SUB is not a jeromq socket): size the context before its first
        ZmqContext.reserve(replays + SOCKETS_KEPT);
        pollers = new IngestPollers(
                ZmqContext.shared(),
                IngestPollers.DEFAULT_POLLERS,
                replays,
                new InflightBytes(config.ingest().queueBytes()));
        WorkerRegistry workers = new WorkerRegistry(
                indexers,
                engineListeners(
                        readyGate,
                        metrics,
                        new ReplayPermits(replays),
                        pollers,
                        config.ingest().degradedHold()),
                config.limits(),
                config.unregisterGrace());
        workers.capListeners(ZmqContext.listenerCapacity());
        if (config.recoversAtStart()) {
            workers.beginRecovery(); // an unregister from now on wins over what recovery brings
        }
        StartupGate gate = new StartupGate(config.minInitialWorkers(), config.recoversAtStart(), readyGate, workers);
        metrics.bind(workers, indexers);
        if (expiry != null) {
            metrics.bindExpiry(expiry);
        }
        components = new IndexerRouting.Components(
                config, workers, new PeerRegistry(), indexers, gate, metrics, accessLog, tracing);
        try {
            for (WorkerEntry w : config.workers()) {
                workers.register(new Registration(
                        w.instanceId(),
                        w.endpoint(),
                        config.modelName(),
                        config.tenantId(),
                        config.blockSize(),
                        w.dpRank(),
                        null,
                        null));
            }
            if (!config.recoversAtStart()) {
                gate.check(); // nothing to recover: open now if the min-workers condition already holds
            }
        } catch (RegistryException | RuntimeException e) {
            close(); // a failed start leaves no listener or writer thread behind
            throw e;
        }
    }

    /** Builds the wiring and registers the config's {@code --workers}; their listeners start at once. */
    public static IndexerCore start(IndexerConfig config) throws RegistryException {
        return new IndexerCore(config);
    }

    /** The service's listeners: one EngineListener per registration, started at once, draining once the gate opens. */
    static ListenerFactory engineListeners(
            ReadyGate gate,
            IndexerMetrics metrics,
            ReplayPermits replays,
            IngestPollers pollers,
            java.time.Duration degradedHold) {
        ListenerOptions options = ListenerOptions.defaults(pollers).with(o -> {
            o.metrics = metrics.ingest();
            o.replayPermits = replays;
            o.degradedHold = degradedHold;
            o.catchUpOnConnect = true;
            o.tailCheckAfter = java.time.Duration.ofSeconds(1);
        });
        return (spec, watermark, sink) -> {
            EngineListener listener = new EngineListener(spec, watermark, sink, gate, options);
            listener.start();
            return listener;
        };
    }

    /** What the routes work on. */
    public IndexerRouting.Components components() {
        return components;
    }

    private static AccessLog openAccessLog(AccessLogSettings settings, IndexerMetrics metrics) {
        if (!settings.enabled()) {
            return null;
        }
        try {
            return AccessLog.open(settings, metrics::accessLogDropped);
        } catch (IOException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    /**
     * The listeners first, then the index writers they feed; the access log and the spans last, with what was
     * queued.
     */
    @Override
    public void close() {
        components.workers().close();
        pollers.close();
        if (expiry != null) {
            expiry.close();
        }
        components.indexers().close();
        if (accessLog != null) {
            accessLog.close();
        }
        if (tracing != null) {
            tracing.close();
        }
    }
}

package io.kvindexer.indexer;

import io.kvindexer.indexer.http.IndexerRouting;
import io.kvindexer.indexer.index.IndexOptions;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.ingest.ReadyGate;
import io.kvindexer.indexer.metrics.IndexerMetrics;
import io.kvindexer.indexer.recovery.StartupGate;
import io.kvindexer.indexer.registry.PeerRegistry;
import io.kvindexer.indexer.registry.Registration;
import io.kvindexer.indexer.registry.RegistryException;
import io.kvindexer.indexer.registry.WorkerEntry;
import io.kvindexer.indexer.registry.WorkerRegistry;

/**
 * What {@link IndexerApp} runs behind its HTTP server (index, registry with real ZMQ listeners, gate, metrics),
 * without the server, so that Helidon's test harness can serve the routing. No peer recovery and no demo: tests
 * of those start an {@link IndexerApp}.
 */
public final class TestIndexer implements AutoCloseable {

    private final IndexerRouting.Components components;

    private TestIndexer(IndexerConfig config) throws RegistryException {
        if (!config.peers().isEmpty() || config.demo()) {
            throw new IllegalArgumentException("peer recovery and the demo need an IndexerApp");
        }
        IndexerMetrics metrics = new IndexerMetrics();
        ReadyGate readyGate = new ReadyGate();
        Indexers indexers = new Indexers(new IndexOptions(config.mixCacheSalt(), config.threads()));
        WorkerRegistry workers = new WorkerRegistry(
                indexers,
                IndexerApp.engineListeners(
                        readyGate,
                        metrics,
                        new io.kvindexer.indexer.ingest.ReplayPermits(
                                config.limits().maxConcurrentReplays())),
                config.limits());
        StartupGate gate = new StartupGate(config.minInitialWorkers(), false, readyGate, workers);
        metrics.bind(workers, indexers);
        components = new IndexerRouting.Components(config, workers, new PeerRegistry(), indexers, gate, metrics);
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
            gate.check();
        } catch (RegistryException | RuntimeException e) {
            close();
            throw e;
        }
    }

    public static TestIndexer start(IndexerConfig config) throws RegistryException {
        return new TestIndexer(config);
    }

    public IndexerRouting.Components components() {
        return components;
    }

    @Override
    public void close() {
        components.workers().close();
        components.indexers().close();
    }
}

package io.kvindexer.indexer.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.helidon.webserver.WebServer;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.dump.BinaryDump;
import io.kvindexer.indexer.dump.BinaryDumpReader;
import io.kvindexer.indexer.dump.SavedRegistration;
import io.kvindexer.indexer.http.IndexerRouting;
import io.kvindexer.indexer.index.IndexOptions;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.index.ModelIndex;
import io.kvindexer.indexer.ingest.BatchSink;
import io.kvindexer.indexer.ingest.EngineListener;
import io.kvindexer.indexer.ingest.HeldSink;
import io.kvindexer.indexer.ingest.InflightBytes;
import io.kvindexer.indexer.ingest.IngestPollers;
import io.kvindexer.indexer.ingest.ListenerOptions;
import io.kvindexer.indexer.ingest.ListenerSpec;
import io.kvindexer.indexer.ingest.ReadyGate;
import io.kvindexer.indexer.ingest.ReplayPermits;
import io.kvindexer.indexer.ingest.RunningListener;
import io.kvindexer.indexer.ingest.SequenceWatermark;
import io.kvindexer.indexer.ingest.ZmqContext;
import io.kvindexer.indexer.metrics.IndexerMetrics;
import io.kvindexer.indexer.recovery.Recovered;
import io.kvindexer.indexer.recovery.SnapshotRecovery;
import io.kvindexer.indexer.recovery.StartupGate;
import io.kvindexer.indexer.registry.PeerRegistry;
import io.kvindexer.indexer.registry.Registration;
import io.kvindexer.indexer.registry.RegistryException;
import io.kvindexer.indexer.registry.WorkerRegistry;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A state cut taken while an unregistered worker's stream is stuck past its stop (its {@code /unregister} answered,
 * its blocks still in the index until the stream closes) leaves that worker's blocks out: no registration of the cut
 * vouches for them, and a restore would keep them with no listener ever to remove them. Both cuts: a snapshot
 * (restored here into a fresh replica) and a peer's binary {@code /dump} over HTTP. Real engines, sockets, listeners,
 * registry, index and snapshot files; instance 1's replay hands a batch to a writer that blocks until the test ends.
 */
class StuckStreamCutTest {

    private static final int BLOCK = 4;
    private static final Duration PATIENCE = Duration.ofSeconds(60);

    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    private final IngestPollers pollers =
            new IngestPollers(ZmqContext.shared(), 1, 2, new InflightBytes(InflightBytes.defaultBudget()));
    private final ListenerOptions options = ListenerOptions.defaults(pollers).with(o -> {
        o.stopWait = Duration.ofMillis(500);
        o.replayPermits = new ReplayPermits(ReplayPermits.DEFAULT);
    });
    private final Indexers indexers = new Indexers(IndexOptions.defaults());
    private final Indexers restored = new Indexers(IndexOptions.defaults());
    private final EngineSimulator zero = EngineSimulator.start(EngineSimulator.Options.defaults());
    private final EngineSimulator one = EngineSimulator.start(EngineSimulator.Options.defaults());
    /** once armed, instance 1's next batch blocks until the test ends */
    private final AtomicBoolean armed = new AtomicBoolean();

    private final CountDownLatch entered = new CountDownLatch(1);
    private final CountDownLatch release = new CountDownLatch(1);
    private final WorkerRegistry registry = new WorkerRegistry(indexers, this::start);
    private WorkerRegistry restoredRegistry;

    @BeforeEach
    void stickInstanceOne() throws Exception {
        registry.register(registration(0, zero));
        registry.register(registration(1, one));
        await().atMost(PATIENCE).until(() -> zero.subscriptions() >= 1 && one.subscriptions() >= 1);
        zero.storeSequence(IntStream.range(0, 8).toArray(), BLOCK).join(); // seq 0 of each, live
        one.storeSequence(IntStream.range(100, 108).toArray(), BLOCK).join();
        await().atMost(PATIENCE).until(() -> applied(0) && applied(1));
        indexers.flushAll()
                .get(PATIENCE.toSeconds(), TimeUnit.SECONDS); // the watermark moves when a batch is handed over
        assertThat(blocksOf(indexers.get("m", "default").orElseThrow(), 1)).isEqualTo(2);

        armed.set(true);
        one.dropLive(1);
        one.storeSequence(IntStream.range(200, 208).toArray(), BLOCK).join(); // seq 1, buffered only
        one.storeSequence(IntStream.range(300, 308).toArray(), BLOCK).join(); // seq 2: a gap, replay seq 1
        assertThat(entered.await(PATIENCE.toSeconds(), TimeUnit.SECONDS))
                .as("instance 1's replay reached the writer")
                .isTrue();
        CompletableFuture.runAsync(
                        () -> {
                            try {
                                registry.unregister(1, "m", "default", null);
                            } catch (RegistryException e) {
                                throw new IllegalStateException(e);
                            }
                        },
                        threads)
                .get(PATIENCE.toSeconds(), TimeUnit.SECONDS); // after the stop's wait of 500 ms
        assertThat(registry.instanceCount()).isEqualTo(1);
        assertThat(blocksOf(indexers.get("m", "default").orElseThrow(), 1))
                .as("its blocks stay until its stream closes")
                .isEqualTo(2);
    }

    @AfterEach
    void close() {
        release.countDown();
        registry.close();
        if (restoredRegistry != null) {
            restoredRegistry.close();
        }
        indexers.close();
        restored.close();
        pollers.close();
        zero.close();
        one.close();
        threads.close();
    }

    @Test
    void aSnapshotLeavesOutTheBlocksOfAWorkerStuckLeaving(@TempDir Path dir) throws Exception {
        try (Snapshotter snapshots =
                new Snapshotter(dir, Duration.ofHours(1), registry, indexers, e -> {}, (d, at, b, free) -> {})) {
            snapshots.write();
        }

        Recovered back = SnapshotRecovery.load(dir, restored, PATIENCE, e -> {});
        assertThat(back).isNotNull();
        assertThat(back.registrations())
                .extracting(SavedRegistration::instanceId)
                .containsExactly(0L);
        restoredRegistry = new WorkerRegistry(restored, this::start);
        restoredRegistry.finishRecovery(back.registrations(), back.fromSnapshot(), back.detached(), back.install());
        restored.flushAll().get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        ModelIndex index = restored.get("m", "default").orElseThrow();
        assertThat(blocksOf(index, 0))
                .as("the registered worker's blocks came back")
                .isEqualTo(2);
        assertThat(blocksOf(index, 1))
                .as("the restore holds no block of the unregistered worker, which no listener would remove")
                .isZero();
    }

    @Test
    void aPeersBinaryDumpLeavesThemOutToo() throws Exception {
        IndexerConfig config = IndexerConfig.defaults();
        IndexerRouting.Components components = new IndexerRouting.Components(
                config,
                registry,
                new PeerRegistry(),
                indexers,
                new StartupGate(0, false, ReadyGate.open(), registry),
                new IndexerMetrics(),
                null,
                null);
        WebServer server = WebServer.builder()
                .port(0)
                .routing(r -> IndexerRouting.routing(r, components))
                .build()
                .start();
        try (HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<InputStream> res = http.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/dump?registrations=true"))
                            .header("Accept", BinaryDump.MEDIA_TYPE)
                            .timeout(PATIENCE)
                            .build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            assertThat(res.statusCode()).isEqualTo(200);
            Owners owners = new Owners();
            try (InputStream body = res.body()) {
                BinaryDumpReader.read(body, owners);
            }
            assertThat(owners.registered).containsExactly(0L);
            assertThat(owners.owning)
                    .as("a peer recovering from it would keep the unregistered worker's blocks for good")
                    .containsExactly(0L);
        } finally {
            server.stop();
        }
    }

    /** The instances a dump registers, and those owning some block in it. */
    private static final class Owners implements BinaryDumpReader.Visitor {
        final Set<Long> registered = new TreeSet<>();
        final Set<Long> owning = new TreeSet<>();

        @Override
        public void worker(int ref, long instanceId, int dpRank) {
            owning.add(instanceId); // announced at its first membership in the section
        }

        @Override
        public void registration(SavedRegistration registration) {
            registered.add(registration.instanceId());
        }
    }

    private boolean applied(long instance) {
        SequenceWatermark w = registry.watermark(instance, 0);
        return w != null && w.get() == 0;
    }

    /** Real listeners; instance 1's batches go through a writer that blocks the first one after {@link #armed}. */
    private RunningListener start(ListenerSpec spec, SequenceWatermark watermark, BatchSink sink) {
        BatchSink through = spec.instanceId() == 1
                ? new HeldSink(sink, () -> armed.compareAndSet(true, false), entered, release)
                : sink;
        EngineListener listener = new EngineListener(spec, watermark, through, ReadyGate.open(), options);
        listener.start();
        return listener;
    }

    private static Registration registration(long id, EngineSimulator sim) {
        return new Registration(id, sim.endpoint(), "m", "default", BLOCK, 0, sim.replayEndpoint(), null);
    }

    private static long blocksOf(ModelIndex index, long instance) {
        long[] n = {0};
        index.dump((w, tier, hasParent, parent, block, local) -> {
            if (w.instanceId() == instance) {
                n[0]++;
            }
        });
        return n[0];
    }
}

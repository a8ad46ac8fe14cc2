package io.kvindexer.operator.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The typed client against a real indexer server: the calls the operator makes and their errors. */
class IndexerClientTest {
    private IndexerApp app;
    private IndexerEndpoint replica;
    private final IndexerClient client =
            new IndexerClient(Duration.ofSeconds(5), Duration.ofSeconds(30), IndexerClient.CallObserver.NONE);

    @BeforeEach
    void start() throws Exception {
        app = IndexerApp.start("--host", "127.0.0.1", "--port", "0");
        replica = new IndexerEndpoint("kv-0", URI.create(app.baseUrl()));
    }

    @AfterEach
    void stop() {
        app.close();
    }

    /**
     * A replica that sends its headers and then stalls (a node gone mid-answer, a frozen container), or drips its
     * body: the call fails as unreachable within the connect and request timeouts. The JDK's request timeout ends
     * with the headers, and the call (so the reconcile that made it) hung for good.
     */
    @Test
    @Timeout(60) // it hung for good
    void aReplicaThatStallsAfterItsHeadersIsUnreachableWithinTheTimeouts() throws Exception {
        IndexerClient quick =
                new IndexerClient(Duration.ofSeconds(1), Duration.ofSeconds(1), IndexerClient.CallObserver.NONE);
        for (boolean drip : new boolean[] {false, true}) {
            try (ServerSocket server = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
                Thread.ofVirtual().start(() -> answerThenStall(server, drip));
                IndexerEndpoint stalled =
                        new IndexerEndpoint("kv-9", URI.create("http://127.0.0.1:" + server.getLocalPort()));
                long start = System.nanoTime();
                assertThatThrownBy(() -> quick.workers(stalled))
                        .isInstanceOfSatisfying(
                                IndexerClientException.class,
                                e -> assertThat(e.unreachable()).isTrue())
                        .hasMessageContaining("no whole answer within 2000 ms");
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
            }
        }
    }

    /** Reads a request, answers 200 with a body announced and never (or a byte a second) sent, until closed. */
    private static void answerThenStall(ServerSocket server, boolean drip) {
        try (Socket s = server.accept()) {
            s.getInputStream().read(new byte[4096]);
            OutputStream out = s.getOutputStream();
            out.write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n["
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            while (true) {
                Thread.sleep(1000);
                if (drip) {
                    out.write(' ');
                    out.flush();
                }
            }
        } catch (IOException | InterruptedException closed) {
            // the test is over
        }
    }

    @Test
    void registerListAndUnregisterRankByRankWithUnsignedIds() {
        long big = -2L; // 18446744073709551614 on the wire
        client.register(
                replica, new WorkerRegistration(big, 0, "tcp://127.0.0.1:5557", "tcp://127.0.0.1:5600"), "m", "t", 16);
        client.register(replica, new WorkerRegistration(big, 1, "tcp://127.0.0.1:5558", null), "m", "t", 16);

        List<RegisteredWorker> workers = client.workers(replica, "m", "t");
        assertThat(workers).singleElement().satisfies(w -> {
            assertThat(w.instanceId()).isEqualTo(big);
            assertThat(w.blockSize()).isEqualTo(16);
            assertThat(w.endpoints()).containsEntry(0, "tcp://127.0.0.1:5557").containsEntry(1, "tcp://127.0.0.1:5558");
        });
        assertThat(client.workers(replica, "other", "t")).isEmpty();

        client.unregister(replica, big, 1, "m", "t");
        assertThat(client.workers(replica).getFirst().endpoints()).containsOnlyKeys(0);
        client.unregister(replica, big, 0, "m", "t");
        assertThat(client.workers(replica)).isEmpty();
    }

    /** The exactness the indexer writes is the one this client reads (a real engine stand-in loses batches). */
    @Test
    void readsEachRanksExactnessAsTheIndexerReportsIt() throws Exception {
        try (EngineSimulator engine = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            client.register(
                    replica, new WorkerRegistration(3, 0, engine.endpoint(), engine.replayEndpoint()), "m", "t", 4);
            await().atMost(Duration.ofSeconds(30)).until(() -> engine.subscriptions() >= 1);
            engine.storeSequence(IntStream.rangeClosed(1, 8).toArray(), 4).get(30, TimeUnit.SECONDS);
            // (the stream joins first: exact once its first batch shows nothing was missed)
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                var rank = client.workers(replica).getFirst().exactness().get(0);
                return rank != null && rank.exact();
            });

            engine.skip(2); // batches the engine never buffered: the replica cannot replay them
            engine.storeSequence(IntStream.rangeClosed(1, 12).toArray(), 4).get(30, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> "degraded"
                            .equals(client.workers(replica)
                                    .getFirst()
                                    .exactness()
                                    .get(0)
                                    .state()));
            ListenerExactness degraded =
                    client.workers(replica).getFirst().exactness().get(0);
            assertThat(degraded.reason()).startsWith("replay incomplete: ");
            assertThat(Instant.parse(degraded.since())).isBefore(Instant.now().plusSeconds(1));
        }
    }

    @Test
    void indexerErrorsCarryStatusAndTheServersMessage() {
        client.register(replica, new WorkerRegistration(7, 0, "tcp://127.0.0.1:5557", null), "m", "t", 16);
        assertThatThrownBy(() -> client.register(
                        replica, new WorkerRegistration(7, 0, "tcp://127.0.0.1:5557", null), "m", "t", 16))
                .isInstanceOfSatisfying(
                        IndexerClientException.class,
                        e -> assertThat(e.status()).isEqualTo(409))
                .hasMessageContaining("already registered")
                .hasMessageContaining("kv-0");
        assertThatThrownBy(() -> client.unregister(replica, 8, 0, "m", "t"))
                .isInstanceOfSatisfying(
                        IndexerClientException.class,
                        e -> assertThat(e.status()).isEqualTo(404));
    }

    @Test
    void peersAreASet() {
        client.registerPeer(replica, "http://kv-1.kv-peers.ns.svc:8090");
        client.registerPeer(replica, "http://kv-1.kv-peers.ns.svc:8090");
        assertThat(client.peers(replica)).containsExactly("http://kv-1.kv-peers.ns.svc:8090");
        client.deregisterPeer(replica, "http://kv-1.kv-peers.ns.svc:8090");
        assertThat(client.peers(replica)).isEmpty();
        assertThat(client.ready(replica)).isTrue();
    }

    @Test
    void anUnreachableReplicaIsAnErrorWithoutStatus() {
        app.close();
        assertThatThrownBy(() -> client.workers(replica))
                .isInstanceOfSatisfying(
                        IndexerClientException.class,
                        e -> assertThat(e.unreachable()).isTrue())
                .hasMessageContaining("kv-0")
                .hasMessageContaining("unreachable");
    }

    /** The indexer's side of pod names (/workers shows pod_name) is on the "indexer-ops" branch. */
    @Test
    void thePodNameIsSentAndTheIndexerShowsItInWorkers() throws Exception {
        client.register(
                replica, new WorkerRegistration(7, 0, "tcp://127.0.0.1:5557", null, "vllm-7d9c-x2x4q"), "m", "t", 16);
        var http = java.net.http.HttpClient.newHttpClient();
        String body = http.send(
                        java.net.http.HttpRequest.newBuilder(URI.create(app.baseUrl() + "/workers"))
                                .build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString())
                .body();
        assertThat(new com.fasterxml.jackson.databind.ObjectMapper()
                        .readTree(body)
                        .get(0)
                        .path("pod_name")
                        .asText())
                .isEqualTo("vllm-7d9c-x2x4q");
    }

    @Test
    void aPodNameIsAcceptedByAnIndexerThatDoesNotKnowTheFieldYet() {
        client.register(replica, new WorkerRegistration(8, 0, "tcp://127.0.0.1:5557", null, "vllm-a"), "m", "t", 16);
        assertThat(client.workers(replica))
                .extracting(RegisteredWorker::instanceId)
                .containsExactly(8L);
    }
}

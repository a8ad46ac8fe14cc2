package io.kvindexer.operator.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvindexer.indexer.IndexerApp;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The typed client against a real indexer server: the calls the operator makes and their errors. */
class IndexerClientTest {
    private IndexerApp app;
    private IndexerEndpoint replica;
    private final IndexerClient client =
            new IndexerClient(Duration.ofSeconds(2), Duration.ofSeconds(5), IndexerClient.CallObserver.NONE);

    @BeforeEach
    void start() throws Exception {
        app = IndexerApp.start("--host", "127.0.0.1", "--port", "0");
        replica = new IndexerEndpoint("kv-0", URI.create(app.baseUrl()));
    }

    @AfterEach
    void stop() {
        app.close();
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

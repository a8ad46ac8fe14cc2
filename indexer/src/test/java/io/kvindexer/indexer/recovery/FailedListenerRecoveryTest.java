package io.kvindexer.indexer.recovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.dump.BinaryDump;
import io.kvindexer.indexer.dump.BinaryDumpReader;
import io.kvindexer.indexer.dump.BinaryDumpWriter;
import io.kvindexer.indexer.dump.SavedRegistration;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.ingest.SequenceWatermark;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Blocks a replica recovered from a peer for a registration whose listener cannot connect to its endpoint at all
 * ({@code failed}): nothing follows that engine, which may store and remove blocks meanwhile. The listener started
 * {@code exact} (a peer's watermark without a replay endpoint meets the live stream) and stayed so once failed; it
 * is {@code degraded} now, naming the failure, the answers that name the instance say it is not exact, and its own
 * dump passes neither those blocks nor the watermark on.
 */
class FailedListenerRecoveryTest {

    private static final String UNCONNECTABLE = "tcp://*:5557";

    @Test
    void blocksRecoveredForAFailedListenerAreNotExact() throws Exception {
        try (EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults());
                IndexerApp peerApp = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient peer = new HttpTestClient(peerApp.baseUrl())) {
            Replicas.awaitReady(peer);
            Replicas.seed(peer, sim); // instance 1 without a replay endpoint, exact, its blocks of tokens 1..8
            byte[] dump = atEndpoint(binaryDump(peerApp), UNCONNECTABLE);
            try (BrokenPeer moved = BrokenPeer.serving(dump, "{}".getBytes(StandardCharsets.UTF_8));
                    IndexerApp replica =
                            IndexerApp.start(Replicas.recoveringFrom(Duration.ofMillis(100), moved.url()));
                    HttpTestClient http = new HttpTestClient(replica.baseUrl())) {
                Replicas.awaitReady(http);
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> listener(http).path("status").asText().equals("failed"));
                JsonNode failed = listener(http);
                assertThat(failed.get("exactness").asText()).isEqualTo("degraded");
                assertThat(failed.get("exactness_reason").asText())
                        .startsWith("failed: failed to connect ZMQ SUB socket to " + UNCONNECTABLE);
                JsonNode answer = http.post("/query", "{\"model_name\":\"m\",\"token_ids\":[1,2,3,4,5,6,7,8]}")
                        .json();
                assertThat(answer.at("/scores/1/0").asInt())
                        .as("the recovered blocks")
                        .isEqualTo(8);
                assertThat(answer.at("/instances/1/exact").asBoolean(true)).isFalse();
                // and a replica recovering from this one does not take them for the engine's: as a degraded worker's
                List<SavedRegistration> passedOn = new ArrayList<>();
                int[] owners = new int[1];
                BinaryDumpReader.read(new ByteArrayInputStream(binaryDump(replica)), new BinaryDumpReader.Visitor() {
                    @Override
                    public void owner(int workerRef, StorageTier tier) {
                        owners[0]++;
                    }

                    @Override
                    public void registration(SavedRegistration r) {
                        passedOn.add(r);
                    }
                });
                assertThat(owners[0]).as("no block of it in the cut").isZero();
                assertThat(passedOn).singleElement().satisfies(r -> {
                    assertThat(r.endpoint()).isEqualTo(UNCONNECTABLE);
                    assertThat(r.watermark()).as("without a watermark").isEqualTo(SequenceWatermark.UNSET);
                });
            }
        }
    }

    private static JsonNode listener(HttpTestClient http) {
        return http.get("/workers").json().at("/0/listeners/0");
    }

    /** The peer's binary dump with its registrations (version 2). */
    private static byte[] binaryDump(IndexerApp app) throws Exception {
        try (HttpClient client = HttpClient.newHttpClient()) {
            HttpResponse<byte[]> res = client.send(
                    HttpRequest.newBuilder(URI.create(app.baseUrl() + "/dump?registrations=true"))
                            .header("Accept", BinaryDump.MEDIA_TYPE)
                            .build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            assertThat(res.statusCode()).isEqualTo(200);
            return res.body();
        }
    }

    /** {@code dump} written again (version 2, one section) with every registration at {@code endpoint}. */
    private static byte[] atEndpoint(byte[] dump, String endpoint) throws Exception {
        List<SavedRegistration> registrations = new ArrayList<>();
        List<WorkerKey> workers = new ArrayList<>();
        List<Runnable> memberships = new ArrayList<>(); // replayed into the writer, in dump order
        BinaryDumpWriter[] writer = new BinaryDumpWriter[1];
        String[] section = new String[2];
        int[] blockSize = new int[1];
        BinaryDumpReader.read(new ByteArrayInputStream(dump), new BinaryDumpReader.Visitor() {
            private boolean hasParent;
            private long parent;
            private long block;
            private long local;

            @Override
            public void index(String modelName, String tenantId, int size) {
                section[0] = modelName;
                section[1] = tenantId;
                blockSize[0] = size;
                workers.clear();
            }

            @Override
            public void worker(int ref, long instanceId, int dpRank) {
                workers.add(new WorkerKey(instanceId, dpRank));
            }

            @Override
            public void block(boolean hasParent, long parentBlockHash, long blockHash, long localHash) {
                this.hasParent = hasParent;
                parent = parentBlockHash;
                block = blockHash;
                local = localHash;
            }

            @Override
            public void owner(int workerRef, StorageTier tier) {
                WorkerKey worker = workers.get(workerRef);
                boolean p = hasParent;
                long pb = parent;
                long b = block;
                long l = local;
                memberships.add(() -> writer[0].membership(worker, tier, p, pb, b, l));
            }

            @Override
            public void registration(SavedRegistration r) {
                registrations.add(new SavedRegistration(
                        r.instanceId(),
                        r.dpRank(),
                        endpoint,
                        r.replayEndpoint(),
                        r.podName(),
                        r.modelName(),
                        r.tenantId(),
                        r.blockSize(),
                        r.watermark(),
                        r.watermarkBatch()));
            }
        });
        assertThat(memberships).as("the seeded blocks").isNotEmpty();
        assertThat(registrations).hasSize(1);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (BinaryDumpWriter w = new BinaryDumpWriter(out, registrations)) {
            writer[0] = w;
            w.beginIndex(section[0], section[1], blockSize[0]);
            memberships.forEach(Runnable::run);
            w.endIndex();
        }
        return out.toByteArray();
    }
}

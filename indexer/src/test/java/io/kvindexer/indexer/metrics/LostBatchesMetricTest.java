package io.kvindexer.indexer.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.http.HttpTestClient;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * {@code dynamo_kvindexer_batches_lost_total} counts u64 sequence ranges: gaps of engines without a replay endpoint
 * add up past a signed long, and a range may be above one by itself. {@code /metrics} must keep answering: a counter
 * that went negative failed every later scrape. (A registration's first seq, however far from 0, is no count of lost
 * batches: the engine ran before it, and TensorRT-LLM's seq may start at the clock's nanoseconds.)
 */
class LostBatchesMetricTest {

    private static final String NAME = "dynamo_kvindexer_batches_lost_total";

    @Test
    void lostRangesBeyondASignedLongAreCountedAndTheScrapeStillWorks() throws Exception {
        // the last is 2^64 - 2, the highest a live batch may carry (2^64 - 1 is the end marker's, skipped)
        long[] gapTo = {0x6000_0000_0000_0000L, 0x6000_0000_0000_0000L, -2L};
        try (ZContext context = new ZContext();
                IndexerApp app = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            for (int engine = 0; engine < gapTo.length; engine++) {
                ZMQ.Socket pub = context.createSocket(SocketType.XPUB);
                pub.setLinger(0);
                int port = pub.bindToRandomPort("tcp://127.0.0.1");
                http.post(
                        "/register",
                        "{\"instance_id\":" + (engine + 1) + ",\"endpoint\":\"tcp://127.0.0.1:" + port
                                + "\",\"model_name\":\"m\",\"block_size\":4}");
                pub.setReceiveTimeOut(30_000);
                assertThat(pub.recv()).as("the listener subscribed").isNotNull();
                for (long seq : new long[] {0, gapTo[engine]}) { // a batch, then one after a gap
                    pub.sendMore(new byte[0]);
                    pub.sendMore(ByteBuffer.allocate(8).putLong(seq).array());
                    pub.send(batch(engine));
                }
            }
            double expected = 2 * (double) 0x6000_0000_0000_0000L + 0x1p64; // (less 5: far below the tolerance)
            await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
                HttpTestClient.Response r = http.get("/metrics");
                r.assertStatus(200);
                assertThat(MetricsEndpointTest.parse(r.body()).get(NAME)).isCloseTo(expected, within(1e6));
            });
            // and each engine's batch after the gap was applied
            String answer = http.post("/query", "{\"model_name\":\"m\",\"token_ids\":[0,1,2,3]}")
                    .body();
            assertThat(answer).contains("\"1\"").contains("\"2\"").contains("\"3\"");
        }
    }

    /** One block of tokens 0..3, the same for every engine, stamped 1.0 (no wall-clock time: no clock rule). */
    private static byte[] batch(int engine) throws IOException {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packArrayHeader(3).packDouble(1.0).packArrayHeader(1);
            p.packMapHeader(5).packString("type").packString("BlockStored");
            p.packString("block_hashes").packArrayHeader(1).packLong(1000 + engine);
            p.packString("token_ids").packArrayHeader(4);
            for (int t = 0; t < 4; t++) {
                p.packInt(t);
            }
            p.packString("block_size").packInt(4).packString("medium").packString("GPU");
            p.packInt(0);
            return p.toByteArray();
        }
    }
}

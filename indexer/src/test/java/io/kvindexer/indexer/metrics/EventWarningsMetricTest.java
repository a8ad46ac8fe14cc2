package io.kvindexer.indexer.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.http.HttpTestClient;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * {@code dynamo_kvrouter_kv_cache_event_warnings{warning_kind}} on {@code /metrics}: a real engine PUB socket sends
 * events the decoder and the index warn about to a registered listener; every kind is exposed, zeros included.
 */
class EventWarningsMetricTest {

    private static final String NAME = "dynamo_kvrouter_kv_cache_event_warnings";

    @Test
    void warningsOfTheDecoderAndTheIndexAreExposedByKind() throws Exception {
        try (ZContext context = new ZContext();
                IndexerApp app = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            ZMQ.Socket pub = context.createSocket(SocketType.XPUB);
            pub.setLinger(0);
            int port = pub.bindToRandomPort("tcp://127.0.0.1");
            http.post(
                    "/register",
                    "{\"instance_id\":1,\"endpoint\":\"tcp://127.0.0.1:" + port
                            + "\",\"model_name\":\"m\",\"block_size\":4}");
            pub.setReceiveTimeOut(30_000);
            assertThat(pub.recv()).as("the listener subscribed").isNotNull();

            long seq = 0;
            for (byte[] payload : new byte[][] {batch(0), batch(1)}) {
                pub.sendMore("".getBytes());
                pub.sendMore(ByteBuffer.allocate(8).putLong(seq++).array());
                pub.send(payload);
            }
            await().atMost(Duration.ofSeconds(60))
                    .untilAsserted(() -> assertThat(warnings(http)).containsEntry("duplicate_store", 1.0));
            Map<String, Double> w = warnings(http);
            assertThat(w)
                    .containsEntry("unknown_medium", 2.0)
                    .containsEntry("non_local", 2.0)
                    .containsEntry("ownership", 2.0)
                    .containsEntry("skipped_cache_group", 2.0)
                    .containsEntry("sparse_span", 2.0)
                    .containsEntry("unknown_storage_block", 2.0)
                    .hasSize(7);
            Map<String, Double> appliedBefore = applied(http);
            assertThat(appliedBefore).containsKey("stored/ok");

            // the worker goes and its index with it: what was counted stays counted (a drop reads as a reset)
            http.post("/unregister", "{\"instance_id\":1,\"model_name\":\"m\"}").assertOk(200);
            assertThat(http.metric("dynamo_kvindexer_models")).isEqualTo(0.0);
            assertThat(warnings(http)).isEqualTo(w);
            assertThat(applied(http)).isEqualTo(appliedBefore);
        }
    }

    /** {@code dynamo_kvrouter_kv_cache_events_applied} as event_type/status → value. */
    private static Map<String, Double> applied(HttpTestClient http) {
        Map<String, Double> out = new java.util.TreeMap<>();
        java.util.regex.Pattern series = java.util.regex.Pattern.compile(
                "dynamo_kvrouter_kv_cache_events_applied\\{event_type=\"([^\"]+)\",status=\"([^\"]+)\"}");
        MetricsEndpointTest.parse(http.get("/metrics").body()).forEach((key, value) -> {
            java.util.regex.Matcher m = series.matcher(key);
            if (m.matches()) {
                out.put(m.group(1) + "/" + m.group(2), value);
            }
        });
        return out;
    }

    private static Map<String, Double> warnings(HttpTestClient http) throws Exception {
        Map<String, Double> out = new java.util.TreeMap<>();
        MetricsEndpointTest.parse(http.get("/metrics").body()).forEach((key, value) -> {
            if (key.startsWith(NAME + "{warning_kind=\"")) {
                out.put(key.substring(NAME.length() + 15, key.length() - 2), value);
            }
        });
        return out;
    }

    /** Each kind once per batch; the second batch re-stores block 7, which makes one duplicate_store. */
    private static byte[] batch(int n) throws IOException {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packArrayHeader(3).packDouble(1.0).packArrayHeader(7);
            stored(p, 7, "GPU", null, null, 4);
            stored(p, 10 + n, "tape", null, null, 4); // unknown medium: indexed on external
            stored(p, 20 + n, "GPU", "locality", "REMOTE", 4); // non_local
            stored(p, 30 + n, "GPU", "ownership", "kvcr", 4); // ownership
            stored(p, 40 + n, "GPU", "kv_cache_spec_kind", "mamba", 4);
            stored(p, 50 + n, "GPU", null, null, 6); // sparse span
            // a hash-only store of a block no engine stored
            p.packMapHeader(5)
                    .packString("type")
                    .packString("BlockStored")
                    .packString("block_hashes")
                    .packArrayHeader(1)
                    .packLong(60 + n)
                    .packString("token_ids")
                    .packArrayHeader(0)
                    .packString("block_size")
                    .packInt(0)
                    .packString("medium")
                    .packString("SHARED_STORAGE");
            p.packInt(0);
            return p.toByteArray();
        }
    }

    private static void stored(MessageBufferPacker p, long hash, String medium, String key, String value, int tokens)
            throws IOException {
        p.packMapHeader(key == null ? 5 : 6).packString("type").packString("BlockStored");
        p.packString("block_hashes").packArrayHeader(1).packLong(hash);
        p.packString("token_ids").packArrayHeader(tokens);
        for (int t = 0; t < tokens; t++) {
            p.packInt((int) hash * 10 + t);
        }
        p.packString("block_size").packInt(4).packString("medium").packString(medium);
        if (key != null) {
            p.packString(key).packString(value);
        }
    }
}

package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Model and tenant names as a platform serving many models sends them: slashes, colons, spaces and any script are
 * names like any other, everywhere they show (an empty one too, as in Dynamo); one with a control character, or one
 * longer than {@code Registration.MAX_NAME}, is a 422 naming the field, and creates nothing (in a query or an
 * unregister too: no index has such a name).
 */
class IndexNamesTest {

    @RegisterExtension
    final RunningIndexer indexer = new RunningIndexer();

    private HttpTestClient.Response register(long id, String model, String tenant) {
        ObjectNode body = JsonNodeFactory.instance
                .objectNode()
                .put("instance_id", id)
                .put("endpoint", "tcp://127.0.0.1:1")
                .put("model_name", model)
                .put("block_size", 16);
        if (tenant != null) {
            body.put("tenant_id", tenant);
        }
        return indexer.http().post("/register", body.toString());
    }

    @Test
    void oddButPrintableNamesAreKeptApartEverywhere() {
        String[][] names = {
            {"meta-llama/Llama-3.1-8B-Instruct", "team/a"},
            {"a:b", "c"},
            {"a", "b:c"},
            {"模型 ü 😀", "tenant with spaces"},
            {"m".repeat(256), "t".repeat(256)},
            // the longest names percent-encoded: a request line of over 5 KiB to name them (Helidon's limit was 4)
            {"😀".repeat(256), "模".repeat(256)},
            {"", ""},
        };
        for (int i = 0; i < names.length; i++) {
            register(i + 1, names[i][0], names[i][1]).assertOk(201);
        }
        JsonNode stats = indexer.http().get("/stats?workers=false").json().get("indexes");
        assertThat(stats).hasSize(names.length);
        for (int i = 0; i < names.length; i++) {
            String q = "model_name=" + URLEncoder.encode(names[i][0], StandardCharsets.UTF_8) + "&tenant_id="
                    + URLEncoder.encode(names[i][1], StandardCharsets.UTF_8);
            JsonNode workers = indexer.http().get("/workers?" + q).json();
            assertThat(workers).as(names[i][0]).hasSize(1);
            assertThat(workers.get(0).get("instance_id").asLong()).isEqualTo(i + 1);
            assertThat(workers.get(0).get("model_name").asText()).isEqualTo(names[i][0]);
            assertThat(workers.get(0).get("tenant_id").asText()).isEqualTo(names[i][1]);
            indexer.http().get("/prefixes?" + q).assertStatus(200); // the console's map of the index
        }
        String metrics = indexer.http().get("/metrics").body();
        assertThat(metrics)
                .contains("dynamo_kvindexer_index_blocks{model=\"模型 ü 😀\",tenant=\"tenant with spaces\"} 0.0")
                .contains("dynamo_kvindexer_index_blocks{model=\"a:b\",tenant=\"c\"} 0.0")
                .contains("dynamo_kvindexer_index_blocks{model=\"a\",tenant=\"b:c\"} 0.0");
    }

    /** The request line's limit sits above the longest names: one longer still is refused, not read. */
    @Test
    void aRequestLineOver8KiBIs414() {
        String name = "x".repeat(8 * 1024);
        assertThat(indexer.http()
                        .get("/workers?model_name=" + name)
                        .assertStatus(414)
                        .error())
                .isEqualTo("Request URI too long.");
    }

    @Test
    void unusableNamesAre422AndCreateNoIndex() {
        String tooLong = "x".repeat(257);
        assertThat(register(3, tooLong, null).assertStatus(422).error())
                .isEqualTo("invalid value for `model_name`: 257 characters; the limit is 256");
        assertThat(register(4, "m", tooLong).assertStatus(422).error())
                .isEqualTo("invalid value for `tenant_id`: 257 characters; the limit is 256");
        // 257 UTF-16 units, but 129 characters: the limit counts characters
        register(5, "😀".repeat(128) + "x", null).assertOk(201);
        assertThat(register(6, "line\nbreak", null).assertStatus(422).error())
                .isEqualTo("invalid value for `model_name`: the control character U+000A at character 4 is not"
                        + " allowed");
        assertThat(register(7, "m", "nul\u0000").assertStatus(422).error())
                .isEqualTo("invalid value for `tenant_id`: the control character U+0000 at character 3 is not allowed");
        String viaGroup =
                "{\"instance_id\":8,\"endpoint\":\"tcp://127.0.0.1:1\",\"model_name\":\"m\",\"block_size\":16,"
                        + "\"tenant_id\":\"ok\",\"routing_group\":\"\\u0085\"}";
        assertThat(indexer.http().post("/register", viaGroup).assertStatus(422).error())
                .isEqualTo("invalid value for `routing_group`: the control character U+0085 at character 0 is not"
                        + " allowed");

        // nor does a query or an unregister name one: a 422, not a 404 echoing the whole name
        String longQuery = "{\"model_name\":\"" + "q".repeat(100_000) + "\",\"token_ids\":[1,2,3]}";
        HttpTestClient.Response q = indexer.http().post("/query", longQuery).assertStatus(422);
        assertThat(q.error()).isEqualTo("invalid value for `model_name`: 100000 characters; the limit is 256");
        assertThat(indexer.http()
                        .post("/query_by_hash", "{\"model_name\":\"m\",\"tenant_id\":\"a\\tb\",\"block_hashes\":[1]}")
                        .assertStatus(422)
                        .error())
                .isEqualTo("invalid value for `tenant_id`: the control character U+0009 at character 1 is not allowed");
        assertThat(indexer.http()
                        .post("/unregister", "{\"instance_id\":5,\"model_name\":\"" + tooLong + "\"}")
                        .assertStatus(422)
                        .error())
                .isEqualTo("invalid value for `model_name`: 257 characters; the limit is 256");
        indexer.http()
                .post("/query", "{\"model_name\":\"no-such-model\",\"token_ids\":[1]}")
                .assertStatus(404);

        JsonNode indexes = indexer.http().get("/stats?workers=false").json().get("indexes");
        assertThat(indexes).hasSize(1);
        assertThat(indexer.http().get("/workers").json()).hasSize(1);
        assertThat(indexer.http().metric("dynamo_kvindexer_models")).isEqualTo(1.0);
    }
}

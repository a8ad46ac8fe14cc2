package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code /register}, {@code /unregister}, {@code /workers}: Dynamo's texts and rules (compatibility.md, HTTP API), ported from
 * its server.rs / registry.rs tests. Listeners point at ports nobody binds: registration must not wait.
 */
class WorkerRoutesTest {

    @RegisterExtension
    final RunningIndexer indexer = new RunningIndexer();

    private HttpTestClient http() {
        return indexer.http();
    }

    private HttpTestClient.Response register(String json) {
        return http().post("/register", json);
    }

    private static String reg(long id, String model, String tenant, int bs, int dp, String endpoint) {
        return "{\"instance_id\":" + Long.toUnsignedString(id) + ",\"endpoint\":\"" + endpoint + "\",\"model_name\":\""
                + model + "\",\"tenant_id\":\"" + tenant + "\",\"block_size\":" + bs + ",\"dp_rank\":" + dp + "}";
    }

    @Test
    void registerAnswers201Ok() {
        HttpTestClient.Response r = register("""
                {"instance_id":1,"endpoint":"tcp://127.0.0.1:5557","model_name":"llama-3-8b","block_size":16}""");
        r.assertOk(201);
        assertThat(r.contentType()).startsWith("application/json");
    }

    @Test
    void workersListsFieldsInDynamoOrder() {
        // get_workers_returns_registered_workers_with_metadata
        register(reg(1, "llama-3-8b", "default", 16, 0, "tcp://127.0.0.1:5557")).assertStatus(201);
        register(reg(1, "llama-3-8b", "default", 16, 1, "tcp://127.0.0.1:5558")).assertStatus(201);
        register(reg(2, "mistral", "customer-a", 32, 0, "tcp://127.0.0.1:5559")).assertStatus(201);

        JsonNode all = http().get("/workers").json();
        assertThat(all).hasSize(2);
        JsonNode w1 = HttpTestClient.worker(all, 1);
        List<String> fields = new ArrayList<>();
        w1.fieldNames().forEachRemaining(fields::add);
        assertThat(fields)
                .containsExactly(
                        "instance_id",
                        "source",
                        "status",
                        "model_name",
                        "tenant_id",
                        "routing_group",
                        "block_size",
                        "endpoints",
                        "listeners");
        assertThat(w1.get("source").asText()).isEqualTo("zmq");
        assertThat(w1.get("model_name").asText()).isEqualTo("llama-3-8b");
        assertThat(w1.get("tenant_id").asText()).isEqualTo("default");
        assertThat(w1.get("routing_group").asText()).isEqualTo("default");
        assertThat(HttpTestClient.worker(all, 2).get("routing_group").asText()).isEqualTo("customer-a");
        assertThat(w1.get("block_size").asInt()).isEqualTo(16);
        assertThat(w1.get("endpoints").get("0").asText()).isEqualTo("tcp://127.0.0.1:5557");
        assertThat(w1.get("endpoints").get("1").asText()).isEqualTo("tcp://127.0.0.1:5558");
        JsonNode l0 = w1.get("listeners").get("0");
        assertThat(l0.get("endpoint").asText()).isEqualTo("tcp://127.0.0.1:5557");
        assertThat(l0.get("status").asText()).isIn("pending", "active");
        assertThat(w1.get("status").asText()).isIn("pending", "active");

        JsonNode byModel = http().get("/workers?model_name=mistral").json();
        assertThat(byModel).hasSize(1);
        assertThat(byModel.get(0).get("instance_id").asLong()).isEqualTo(2);
        assertThat(byModel.get(0).get("block_size").asInt()).isEqualTo(32);
        assertThat(http().get("/workers?model_name=llama-3-8b&tenant_id=customer-a")
                        .json())
                .isEmpty();
        assertThat(http().get("/workers?tenant_id=customer-a").json()).hasSize(1);
        assertThat(http().get("/workers?routing_group=customer-a").json()).hasSize(1);
        assertThat(http().get("/workers?model_name=unknown").body()).isEqualTo("[]");
    }

    @Test
    void u64InstanceIdsAreUnsignedDecimals() {
        register(reg(-1L, "m", "default", 4, 0, "tcp://127.0.0.1:5557")).assertStatus(201);
        assertThat(http().get("/workers").body()).contains("\"instance_id\":18446744073709551615,");
    }

    /**
     * An endpoint no engine can have (a 200 KB host name; DNS allows 253 characters) is a short 422 naming the field,
     * not a 400 echoing it whole; a malformed one of any size is quoted by its first 100 characters.
     */
    @Test
    void oversizedEndpointsAre422NamingTheFieldAndAreNotEchoed() {
        String host = "h".repeat(200_000);
        HttpTestClient.Response r = register(reg(1, "m", "default", 4, 0, "tcp://" + host + ":5557"));
        r.assertStatus(422);
        assertThat(r.body()).hasSizeLessThan(200);
        assertThat(r.error()).isEqualTo("invalid value for `endpoint`: 200011 characters; the limit is 512");

        r = register(reg(1, "m", "default", 4, 0, "tcp://" + "h".repeat(254) + ":5557"));
        r.assertStatus(422);
        assertThat(r.error()).isEqualTo("invalid value for `endpoint`: a TCP host of 254 characters; the limit is 253");
        r = register("{\"instance_id\":1,\"endpoint\":\"tcp://h:1\",\"model_name\":\"m\",\"block_size\":4,"
                + "\"replay_endpoint\":\"ipc://" + host + "\"}");
        r.assertStatus(422);
        assertThat(r.error()).isEqualTo("invalid value for `replay_endpoint`: 200006 characters; the limit is 512");

        // within the limit but malformed: the 400 quotes it cut
        String missingPort = "tcp://" + "h".repeat(250);
        r = register(reg(1, "m", "default", 4, 0, missingPort));
        r.assertStatus(400);
        assertThat(r.error())
                .isEqualTo("invalid ZMQ endpoint `" + missingPort.substring(0, 100) + "...`: missing TCP port");
        register(reg(1, "m", "default", 4, 0, "tcp://" + "h".repeat(253) + ":5557"))
                .assertOk(201);
        assertThat(http().get("/workers").json()).hasSize(1);
    }

    @Test
    void endpointValidationIs400WithDynamoTexts() {
        HttpTestClient.Response r = register(reg(1, "m", "default", 4, 0, "tcp://host"));
        r.assertStatus(400);
        assertThat(r.error()).isEqualTo("invalid ZMQ endpoint `tcp://host`: missing TCP port");
        r = register("""
                {"instance_id":1,"endpoint":"tcp://h:1","model_name":"m","block_size":4,"replay_endpoint":"udp://h:2"}""");
        r.assertStatus(400);
        assertThat(r.error())
                .isEqualTo(
                        "invalid replay endpoint `udp://h:2`: invalid ZMQ endpoint `udp://h:2`: unsupported scheme `udp`");
        assertThat(http().get("/workers").json()).isEmpty();
    }

    @Test
    void conflictsAre409InDynamoOrder() {
        register(reg(1, "m", "default", 16, 0, "tcp://127.0.0.1:5557")).assertStatus(201);

        HttpTestClient.Response other = register(reg(1, "m2", "default", 16, 1, "tcp://127.0.0.1:5558"));
        other.assertStatus(409);
        assertThat(other.error()).isEqualTo("instance 1 is already registered for model=m tenant=default");

        HttpTestClient.Response dup = register(reg(1, "m", "default", 16, 0, "tcp://127.0.0.1:5558"));
        dup.assertStatus(409);
        assertThat(dup.error()).isEqualTo("instance 1 dp_rank 0 already registered");

        HttpTestClient.Response bs = register(reg(2, "m", "default", 32, 0, "tcp://127.0.0.1:5559"));
        bs.assertStatus(409);
        assertThat(bs.error()).isEqualTo("block_size mismatch for model=m tenant=default: existing=16, requested=32");

        // the duplicate did not replace the first registration's endpoint
        assertThat(http().get("/workers")
                        .json()
                        .get(0)
                        .get("endpoints")
                        .get("0")
                        .asText())
                .isEqualTo("tcp://127.0.0.1:5557");
    }

    @Test
    void aliasesAreAccepted() {
        HttpTestClient.Response r = register("""
                {"instance_id":5,"endpoint":"tcp://h:1","model_name":"m","routing_group":"g","block_size":4,
                 "additionalsalt":"s","dp_rank":null,"replay_endpoint":null}""");
        assertThat(r.status()).as(r.body()).isEqualTo(201);
        r = register("""
                {"instance_id":6,"endpoint":"tcp://h:2","model_name":"m","tenant_id":"g","block_size":4,
                 "additional_salt":"s"}""");
        assertThat(r.status()).as(r.body()).isEqualTo(201);
        JsonNode ws = http().get("/workers?tenant_id=g").json();
        assertThat(ws).hasSize(2);
        assertThat(HttpTestClient.worker(ws, 5).get("endpoints").has("0")).isTrue();

        // both given: routing_group counts, as newer Dynamo reads only it (a legacy tenant_id beside it is ignored)
        r = register("""
                {"instance_id":7,"endpoint":"tcp://h:3","model_name":"m","tenant_id":"legacy","routing_group":"g",
                 "block_size":4}""");
        assertThat(r.status()).as(r.body()).isEqualTo(201);
        assertThat(http().get("/workers?tenant_id=legacy&routing_group=g").json())
                .hasSize(3);
        assertThat(HttpTestClient.worker(http().get("/workers").json(), 7)
                        .get("tenant_id")
                        .asText())
                .isEqualTo("g");
        http().post(
                        "/query",
                        "{\"model_name\":\"m\",\"routing_group\":\"g\",\"tenant_id\":\"x\",\"token_ids\":[1,2,3,4]}")
                .assertStatus(200);
        http().post(
                        "/unregister",
                        "{\"instance_id\":7,\"model_name\":\"m\",\"tenant_id\":\"x\",\"routing_group\":\"g\"}")
                .assertOk(200);
        assertThat(http().get("/workers?routing_group=g").json()).hasSize(2);
    }

    @Test
    void unregisterOneRankKeepsTheOther() {
        register(reg(1, "m", "t", 4, 0, "tcp://h:1"));
        register(reg(1, "m", "t", 4, 1, "tcp://h:2"));
        HttpTestClient.Response r = http().post(
                        "/unregister", "{\"instance_id\":1,\"model_name\":\"m\",\"tenant_id\":\"t\",\"dp_rank\":1}");
        r.assertOk(200);
        assertOnlyRankZeroLeft();

        r = http().post("/unregister", "{\"instance_id\":1,\"model_name\":\"m\",\"tenant_id\":\"t\",\"dp_rank\":1}");
        r.assertStatus(404);
        assertThat(r.error()).isEqualTo("instance 1 dp_rank 1 not found");

        // the last rank removes the instance and the index
        r = http().post("/unregister", "{\"instance_id\":1,\"model_name\":\"m\",\"tenant_id\":\"t\",\"dp_rank\":0}");
        r.assertStatus(200);
        assertThat(http().get("/workers").json()).isEmpty();
        http().post("/query", "{\"token_ids\":[1,2,3,4],\"model_name\":\"m\",\"tenant_id\":\"t\"}")
                .assertStatus(404);
    }

    @Test
    void unregisterErrorsAre404WithDynamoTexts() {
        register(reg(1, "m", "t", 4, 0, "tcp://h:1"));
        HttpTestClient.Response r = http().post("/unregister", "{\"instance_id\":9,\"model_name\":\"m\"}");
        r.assertStatus(404);
        assertThat(r.error()).isEqualTo("instance 9 not found");
        r = http().post("/unregister", "{\"instance_id\":1,\"model_name\":\"m\",\"tenant_id\":\"other\"}");
        r.assertStatus(404);
        assertThat(r.error()).isEqualTo("instance 1 is registered for model=m tenant=t");
        r = http().post("/unregister", "{\"instance_id\":1,\"model_name\":\"x\"}");
        r.assertStatus(404);
        assertThat(r.error()).isEqualTo("instance 1 is registered for model=m tenant=t");
        r = http().post(
                        "/unregister",
                        "{\"instance_id\":1,\"model_name\":\"m\",\"tenant_id\":\"other\",\"dp_rank\":0}");
        r.assertStatus(404);
        assertThat(r.error()).isEqualTo("instance 1 is registered for model=m tenant=t");
        assertThat(http().get("/workers").json()).hasSize(1);
    }

    /** The reference document's form: a rank without a tenant is still the rank to remove (Dynamo's code ignores it). */
    @Test
    void unregisterWithoutTenantRemovesTheNamedRankOnly() {
        register(reg(1, "m", "t", 4, 0, "tcp://h:1"));
        register(reg(1, "m", "t", 4, 1, "tcp://h:2"));
        HttpTestClient.Response r =
                http().post("/unregister", "{\"instance_id\":1,\"model_name\":\"m\",\"dp_rank\":1}");
        r.assertStatus(200);
        assertOnlyRankZeroLeft();

        r = http().post("/unregister", "{\"instance_id\":1,\"model_name\":\"m\",\"dp_rank\":5}");
        r.assertStatus(404);
        assertThat(r.error()).isEqualTo("instance 1 dp_rank 5 not found");
        r = http().post("/unregister", "{\"instance_id\":1,\"model_name\":\"x\",\"dp_rank\":0}");
        r.assertStatus(404);
        assertThat(r.error()).isEqualTo("instance 1 is registered for model=m tenant=t");

        http().post("/unregister", "{\"instance_id\":1,\"model_name\":\"m\"}").assertStatus(200);
        assertThat(http().get("/workers").json()).isEmpty();
    }

    @Test
    void unregisterWithTenantRemovesWholeInstanceAndBlockSizeCanBeChosenAnew() {
        register(reg(1, "m", "t", 4, 0, "tcp://h:1"));
        http().post("/unregister", "{\"instance_id\":1,\"model_name\":\"m\",\"tenant_id\":\"t\"}")
                .assertStatus(200);
        register(reg(1, "m", "t", 8, 0, "tcp://h:1")).assertStatus(201);
        assertThat(http().get("/workers").json().get(0).get("block_size").asInt())
                .isEqualTo(8);
    }

    @Test
    void indexStaysWhileAnotherWorkerUsesIt() {
        register(reg(1, "m", "default", 4, 0, "tcp://h:1"));
        register(reg(2, "m", "default", 4, 0, "tcp://h:2"));
        http().post("/unregister", "{\"instance_id\":1,\"model_name\":\"m\"}");
        http().post("/query", "{\"token_ids\":[1,2,3,4],\"model_name\":\"m\"}").assertStatus(200);
        HttpTestClient.Response mismatch = register(reg(3, "m", "default", 8, 0, "tcp://h:3"));
        mismatch.assertStatus(409);
    }

    @Test
    void watermarkSurvivesUnregisterAndRegister() {
        // compatibility.md, Where we differ on purpose: the documented behaviour (Dynamo G2's code deletes it)
        register(reg(7, "m", "default", 4, 0, "tcp://h:1"));
        var wm = indexer.app().workers().watermark(7, 0);
        wm.set(41);
        http().post("/unregister", "{\"instance_id\":7,\"model_name\":\"m\"}");
        register(reg(7, "m", "default", 4, 0, "tcp://h:1"));
        assertThat(indexer.app().workers().watermark(7, 0)).isSameAs(wm);
        assertThat(indexer.app().workers().watermark(7, 0).get()).isEqualTo(41);
    }

    /** The one instance registered lists rank 0 alone. */
    private void assertOnlyRankZeroLeft() {
        JsonNode w = http().get("/workers").json().get(0);
        assertThat(w.get("endpoints").size()).isEqualTo(1);
        assertThat(w.get("endpoints").has("0")).isTrue();
    }
}

package io.kvindexer.indexer.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.webserver.testing.junit5.ServerTest;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.http.IndexerRoutes;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Every POST route fed valid bodies with a field or three changed to another type, an extreme number, an empty or
 * huge string, removed, or the body cut or replaced (every field with every value, then 1,000 seeded random
 * changes): each answer is a 2xx or a 4xx with a
 * JSON error, never a 5xx (a {@code block_size} of 0 was one), and the server answers the next request. Beside
 * {@link HttpHostileRequestFuzzTest}, whose random bytes and shapes rarely get a body valid but for one value.
 */
@ServerTest
@IndexerRoutes
class MutatedBodiesTest {

    private static final Map<String, String> VALID = Map.of(
            "/query", "{\"model_name\":\"m\",\"token_ids\":[1,2,3,4,5,6,7,8],\"lora_name\":\"x\",\"cache_salt\":\"s\"}",
            "/query_by_hash", "{\"model_name\":\"m\",\"block_hashes\":[1,-2,3]}",
            "/query_tiered_by_hash", "{\"model_name\":\"m\",\"block_hashes\":[1,2],\"routing_group\":\"default\"}",
            "/register",
                    "{\"instance_id\":77,\"endpoint\":\"tcp://127.0.0.1:1\",\"model_name\":\"fz\",\"block_size\":4,"
                            + "\"dp_rank\":1,\"replay_endpoint\":\"tcp://127.0.0.1:2\",\"pod_name\":\"p-1\"}",
            "/unregister", "{\"instance_id\":77,\"model_name\":\"fz\",\"tenant_id\":\"default\",\"dp_rank\":1}",
            "/register_peer", "{\"url\":\"http://127.0.0.1:9\"}",
            "/deregister_peer", "{\"url\":\"http://127.0.0.1:9\"}");

    private static final String[] VALUES = {
        "null",
        "true",
        "0",
        "-1",
        "1",
        "2147483648",
        "4294967296",
        "18446744073709551616",
        "-9223372036854775808",
        "1.5",
        "1e308",
        "\"\"",
        "\"" + "x".repeat(3000) + "\"",
        "\"\\u0000\"",
        "\"é🙂\"",
        "[]",
        "[1]",
        "{}",
        "{\"a\":1}",
        "\"tcp://[::1]:5\"",
        "\"ipc:///tmp/x\"",
        "\"tcp://*:1\"",
        "[null]",
        "[18446744073709551616]",
        "[-1]",
        "[\"1\"]"
    };

    private static final String[] BROKEN = {"[]", "null", "1", "\"s\"", "{", "{\"a\":}", "{\"token_ids\":[1,2,"};

    @Test
    void noBodyGetsA5xx(HttpTestClient http) throws Exception {
        http.post(
                        "/register",
                        "{\"instance_id\":1,\"endpoint\":\"tcp://127.0.0.1:1\",\"model_name\":\"m\","
                                + "\"block_size\":4}")
                .assertStatus(201);
        List<String> routes = new ArrayList<>(VALID.keySet());
        routes.sort(null);
        List<String[]> requests = new ArrayList<>();
        // every field of every route once with each value, and once left out; then random multi-field changes
        for (String route : routes) {
            ObjectNode valid = (ObjectNode) HttpTestClient.JSON.readTree(VALID.get(route));
            for (Iterator<String> it = valid.fieldNames(); it.hasNext(); ) {
                String field = it.next();
                for (String value : VALUES) {
                    requests.add(new String[] {
                        route,
                        valid.deepCopy()
                                .set(field, HttpTestClient.JSON.readTree(value))
                                .toString()
                    });
                }
                requests.add(
                        new String[] {route, valid.deepCopy().without(field).toString()});
            }
        }
        Random random = new Random(20261206);
        for (int i = 0; i < 1_000; i++) {
            String route = routes.get(random.nextInt(routes.size()));
            requests.add(new String[] {route, mutate(random, VALID.get(route))});
        }
        List<String> serverErrors = new ArrayList<>();
        int fresh = 0;
        for (String[] request : requests) {
            // each registration is an instance and a model of its own: one that exists would answer 409 first
            fresh++;
            String body = request[1]
                    .replace("\"model_name\":\"fz\"", "\"model_name\":\"fz-" + fresh + "\"")
                    .replace("\"instance_id\":77", "\"instance_id\":" + (1_000 + fresh));
            HttpTestClient.Response r = http.post(request[0], body);
            if (r.status() >= 500 || r.status() < 200) {
                serverErrors.add(r.status() + " " + request[0] + " " + body + " -> " + r.body());
            } else if (r.status() >= 400) {
                assertThat(r.error()).as(request[0] + " " + body).isNotBlank();
            }
        }
        assertThat(serverErrors).isEmpty();
        assertThat(requests).hasSizeGreaterThan(1_500);
        http.get("/health").assertStatus(200);
    }

    private static String mutate(Random random, String valid) throws Exception {
        if (random.nextInt(8) == 0) {
            return BROKEN[random.nextInt(BROKEN.length)];
        }
        ObjectNode body = (ObjectNode) HttpTestClient.JSON.readTree(valid);
        for (int n = 1 + random.nextInt(3); n > 0; n--) {
            List<String> fields = new ArrayList<>();
            for (Iterator<String> it = body.fieldNames(); it.hasNext(); ) {
                fields.add(it.next());
            }
            JsonNode value = HttpTestClient.JSON.readTree(VALUES[random.nextInt(VALUES.length)]);
            int op = random.nextInt(10);
            if (op < 6 && !fields.isEmpty()) {
                body.set(fields.get(random.nextInt(fields.size())), value);
            } else if (op < 8 && !fields.isEmpty()) {
                body.remove(fields.get(random.nextInt(fields.size())));
            } else {
                String[] names = {"instance_id", "model_name", "block_size", "token_ids", "url", "extra"};
                body.set(names[random.nextInt(names.length)], value);
            }
        }
        return body.toString();
    }
}

package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The console's routes on a running server with two simulated engines: the static files from the jar,
 * {@code GET /stats} and {@code GET /prefixes} with their numbers and their errors.
 */
class ConsoleRoutesTest {

    private static IndexerApp app;
    private static HttpTestClient http;
    private static EngineSimulator one;
    private static EngineSimulator two;

    @BeforeAll
    static void start() throws Exception {
        app = IndexerApp.start(IndexerConfig.defaults());
        http = new HttpTestClient(app.baseUrl());
        one = EngineSimulator.start(EngineSimulator.Options.defaults());
        two = EngineSimulator.start(EngineSimulator.Options.builder().dpRank(1).build());
        register(1, 0, one);
        register(2, 1, two);
        await().atMost(Duration.ofSeconds(30)).until(() -> one.subscriptions() >= 1 && two.subscriptions() >= 1);
        // both hold the 3-block system prompt; engine 1 goes on for 2 more blocks, engine 2 keeps one on the host tier
        one.storeSequence(range(1, 20), 4).get(30, TimeUnit.SECONDS);
        two.storeSequence(range(1, 12), 4).get(30, TimeUnit.SECONDS);
        two.storeSequence(range(1, 16), 4, "CPU", null).get(30, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(30))
                .until(() ->
                        http.get("/stats").json().at("/indexes/0/memberships").asLong() == 5 + 3 + 4);
    }

    private static void register(long id, int rank, EngineSimulator sim) {
        http.post(
                        "/register",
                        "{\"instance_id\":" + id + ",\"dp_rank\":" + rank + ",\"endpoint\":\"" + sim.endpoint()
                                + "\",\"model_name\":\"m\",\"block_size\":4}")
                .assertStatus(201);
    }

    @AfterAll
    static void stop() {
        one.close();
        two.close();
        http.close();
        app.close();
    }

    private static int[] range(int from, int to) {
        return IntStream.rangeClosed(from, to).toArray();
    }

    @Test
    void statsListsEveryIndexWithBlocksPerWorkerAndTier() {
        HttpTestClient.Response r = http.get("/stats");

        r.assertStatus(200);
        assertThat(r.contentType()).startsWith("application/json");
        JsonNode ix = r.json().get("indexes").get(0);
        assertThat(r.json().get("indexes")).hasSize(1);
        assertThat(ix.get("model_name").asText()).isEqualTo("m");
        assertThat(ix.get("tenant_id").asText()).isEqualTo("default");
        assertThat(ix.get("block_size").asInt()).isEqualTo(4);
        assertThat(ix.get("blocks").asLong()).isEqualTo(5); // every block of two's is one of one's (same hashes)
        JsonNode workers = ix.get("workers");
        assertThat(workers).hasSize(2);
        assertThat(workers.get(0).get("instance_id").asLong()).isEqualTo(1);
        assertThat(workers.get(0).get("dp_rank").asInt()).isZero();
        assertThat(workers.get(0).get("blocks").toString())
                .isEqualTo("{\"device\":5,\"host_pinned\":0,\"disk\":0,\"external\":0}");
        assertThat(workers.get(1).get("instance_id").asLong()).isEqualTo(2);
        assertThat(workers.get(1).get("dp_rank").asInt()).isEqualTo(1);
        assertThat(workers.get(1).get("blocks").toString())
                .isEqualTo("{\"device\":3,\"host_pinned\":4,\"disk\":0,\"external\":0}");
        assertThat(http.get("/stats?model_name=m&tenant_id=default").json().get("indexes"))
                .hasSize(1);
        assertThat(http.get("/stats?model_name=other").json().get("indexes")).isEmpty();
        JsonNode cheap = http.get("/stats?workers=false").json().get("indexes").get(0);
        assertThat(cheap.get("memberships").asLong())
                .isEqualTo(ix.get("memberships").asLong());
        assertThat(cheap.has("workers")).isFalse();
        // in any case, as /dump's flags: Python's requests writes params={"workers": False} as workers=False
        HttpTestClient.Response sizesOnly = http.get("/stats?workers=False");
        assertThat(sizesOnly.status()).as(sizesOnly.body()).isEqualTo(200);
        assertThat(sizesOnly.json().get("indexes").get(0).has("workers")).isFalse();
        HttpTestClient.Response perWorker = http.get("/stats?workers=TRUE");
        assertThat(perWorker.status()).as(perWorker.body()).isEqualTo(200);
        assertThat(perWorker.json().get("indexes").get(0).has("workers")).isTrue();
        assertError(http.get("/stats?workers=maybe"), 400, "workers");
    }

    @Test
    void prefixesShowWhereSharingEnds() {
        HttpTestClient.Response r = http.get("/prefixes?model_name=m&limit=5");

        r.assertStatus(200);
        JsonNode prefixes = r.json().get("prefixes");
        // blocks 1..3 by both (the sim's hashes are content-addressed), then each engine's own tail
        assertThat(prefixes.get(0).get("workers").asInt()).isEqualTo(2);
        assertThat(prefixes.get(0).get("depth").asInt()).isEqualTo(4); // two's host copy of block 4 shares it too
        assertThat(prefixes.get(0).get("tokens").asInt()).isEqualTo(16);
        assertThat(prefixes.get(0).get("holders").toString())
                .isEqualTo("[{\"instance_id\":1,\"dp_rank\":0},{\"instance_id\":2,\"dp_rank\":1}]");
        assertThat(prefixes.get(0).get("block_hash").bigIntegerValue().longValue())
                .isEqualTo(EngineSimulator.sequenceHashes(range(1, 16), 4, null)[3]);
        assertThat(prefixes.get(1).get("workers").asInt()).isEqualTo(1);
        assertThat(prefixes.get(1).get("depth").asInt()).isEqualTo(5);
        assertThat(http.get("/prefixes?model_name=m&limit=1").json().get("prefixes"))
                .hasSize(1);
    }

    @Test
    void prefixesRefusesBadParametersWithAJsonError() {
        assertError(http.get("/prefixes"), 400, "model_name");
        assertError(http.get("/prefixes?model_name=m&limit=0"), 400, "limit");
        assertError(http.get("/prefixes?model_name=m&limit=abc"), 400, "limit");
        assertError(http.get("/prefixes?model_name=m&limit=1001"), 400, "limit");
        assertError(http.get("/prefixes?model_name=m&tenant_id=nobody"), 404, "tenant=nobody");
        http.method("POST", "/stats").assertStatus(405);
        http.method("POST", "/prefixes").assertStatus(405);
    }

    private static void assertError(HttpTestClient.Response r, int status, String mentions) {
        assertThat(r.status()).isEqualTo(status);
        assertThat(r.contentType()).startsWith("application/json");
        assertThat(r.error()).contains(mentions);
    }

    /**
     * {@code /ui} sends the browser to {@code ui/} relative to itself, with the address's query: behind a proxy that
     * mounts the indexer under {@code /a/}, {@code /a/ui?refresh=30} must land on {@code /a/ui/?refresh=30}, not on
     * the proxy's own {@code /ui/} without the refresh period.
     */
    @Test
    void uiRedirectsToItsSlashRelativelyAndKeepsTheQuery() throws Exception {
        try (java.net.http.HttpClient client = java.net.http.HttpClient.newHttpClient()) {
            for (String query : new String[] {"", "?refresh=30"}) {
                java.net.http.HttpResponse<Void> r = client.send(
                        java.net.http.HttpRequest.newBuilder(java.net.URI.create(app.baseUrl() + "/ui" + query))
                                .build(),
                        java.net.http.HttpResponse.BodyHandlers.discarding());
                assertThat(r.statusCode()).isEqualTo(301);
                String location = r.headers().firstValue("Location").orElseThrow();
                assertThat(java.net
                                .URI
                                .create("https://proxy.example/a/ui" + query)
                                .resolve(location)
                                .toString())
                        .isEqualTo("https://proxy.example/a/ui/" + query);
                assertThat(java.net
                                .URI
                                .create(app.baseUrl() + "/ui" + query)
                                .resolve(location)
                                .toString())
                        .isEqualTo(app.baseUrl() + "/ui/" + query);
            }
        }
    }

    @Test
    void theConsoleIsServedFromTheJar() throws IOException {
        HttpTestClient.Response redirect = http.request("GET", "/ui", null, null);
        redirect.assertStatus(301);

        HttpTestClient.Response page = http.get("/ui/");
        page.assertStatus(200);
        assertThat(page.contentType()).startsWith("text/html");
        assertThat(page.body()).contains("<script type=\"module\" src=\"app.js\">");
        // every file the page and its modules name is served, with its type
        assertServed("app.js", "text/javascript");
        assertServed("console.css", "text/css");
        assertServed("favicon.svg", "image/svg+xml");
        Pattern imports = Pattern.compile("from '\\./([a-z0-9-]+\\.js)'");
        for (String module : new String[] {
            "app.js",
            "api.js",
            "charts.js",
            "overview.js",
            "query.js",
            "cachemap.js",
            "pickers.js",
            "dom.js",
            "expiry.js",
            "process.js"
        }) {
            Matcher m = imports.matcher(resource(module));
            while (m.find()) {
                assertServed(m.group(1), "text/javascript");
            }
        }
        assertError(http.get("/ui/no-such.js"), 404, "the console has no file no-such.js");
        http.get("/ui/..%2Fopenapi.yaml").assertStatus(404);
        assertError(http.get("/ui/openapi.yaml"), 404, "no file openapi.yaml"); // beside ui/ on the class path
    }

    private static void assertServed(String file, String type) {
        HttpTestClient.Response r = http.get("/ui/" + file);
        assertThat(r.status()).as(file).isEqualTo(200);
        assertThat(r.contentType()).as(file).startsWith(type);
        assertThat(r.body()).as(file).isNotEmpty();
    }

    private static String resource(String name) throws IOException {
        try (InputStream in = ConsoleRoutesTest.class.getResourceAsStream("/ui/" + name)) {
            assertThat(in).as(name).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void withAuthOnThePageIsPublicAndPrefixesNeedTheToken() {
        try (IndexerApp secured = IndexerApp.start(IndexerConfig.defaults().with(c -> c.authToken = "s3cret"));
                HttpTestClient client = new HttpTestClient(secured.baseUrl())) {
            client.get("/ui/").assertStatus(200);
            client.get("/ui/app.js").assertStatus(200);
            client.get("/stats").assertStatus(200);
            HttpTestClient.Response refused = client.get("/prefixes?model_name=m");
            refused.assertStatus(401);
            assertThat(refused.error()).contains("Authorization");
            HttpTestClient.Response allowed =
                    client.request("GET", "/prefixes?model_name=m", null, null, "Authorization", "Bearer s3cret");
            allowed.assertStatus(404); // past the token check: there is no index "m" here
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}

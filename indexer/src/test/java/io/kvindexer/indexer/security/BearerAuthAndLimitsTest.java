package io.kvindexer.indexer.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.ConfigException;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerCli;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.common.ServiceLimits;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.http.IndexerRoutes;
import io.kvindexer.indexer.reliability.FaultHarnessAccess;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bearer-token authentication, the limits a client cannot exceed, and peer URL validation, on a running server. */
public class BearerAuthAndLimitsTest {

    private static final String TOKEN = "s3cret-token-0123456789";

    private static HttpTestClient.Response post(HttpTestClient http, String path, String json, String token) {
        return http.request("POST", path, "application/json", json.getBytes(StandardCharsets.UTF_8), auth(token));
    }

    private static HttpTestClient.Response get(HttpTestClient http, String path, String token) {
        return http.request("GET", path, null, null, auth(token));
    }

    private static String[] auth(String token) {
        return token == null ? new String[0] : new String[] {"Authorization", "Bearer " + token};
    }

    /** Run by {@code http.RoutesTest}, in memory and over a socket. */
    @IndexerRoutes
    public abstract static class TokenCases {

        @IndexerRoutes.Config
        static IndexerConfig config() {
            return IndexerConfig.defaults().with(c -> c.authToken = TOKEN);
        }

        @Test
        void mutatingEndpointsAndDumpNeedTheTokenReadOnlyOnesDoNot(HttpTestClient http) {
            String reg = "{\"instance_id\":1,\"endpoint\":\"tcp://127.0.0.1:9\",\"model_name\":\"m\",\"block_size\":4}";
            Map<String, String> mutating = Map.of(
                    "/register",
                    reg,
                    "/unregister",
                    "{\"instance_id\":1}",
                    "/register_peer",
                    "{\"url\":\"http://127.0.0.1:1\"}",
                    "/deregister_peer",
                    "{\"url\":\"http://127.0.0.1:1\"}");
            for (var e : mutating.entrySet()) {
                for (String bad : new String[] {null, "wrong", TOKEN + "x", TOKEN.substring(1)}) {
                    HttpTestClient.Response r = post(http, e.getKey(), e.getValue(), bad);
                    assertThat(r.status()).as(e.getKey() + " with " + bad).isEqualTo(401);
                    assertThat(r.error()).isNotBlank();
                }
            }
            get(http, "/dump", null).assertStatus(401);
            get(http, "/dump", "nope").assertStatus(401);
            // nothing was changed by the refused calls
            assertThat(http.get("/workers").json()).isEmpty();
            assertThat(http.get("/peers").json().toString()).doesNotContain("127.0.0.1:1");
            // with the token they work
            post(http, "/register", reg, TOKEN).assertStatus(201);
            post(http, "/register_peer", "{\"url\":\"http://127.0.0.1:1\"}", TOKEN)
                    .assertStatus(201);
            get(http, "/dump", TOKEN).assertStatus(200);
            // read-only endpoints stay open
            http.post("/query", "{\"model_name\":\"m\",\"token_ids\":[1,2,3,4]}")
                    .assertStatus(200);
            http.post("/query_by_hash", "{\"model_name\":\"m\",\"block_hashes\":[1]}")
                    .assertStatus(200);
            for (String open : List.of("/workers", "/peers", "/health", "/ready", "/metrics")) {
                assertThat(http.get(open).status()).as(open).isEqualTo(200);
            }
            post(http, "/unregister", "{\"instance_id\":1,\"model_name\":\"m\"}", TOKEN)
                    .assertStatus(200);
        }
        /** RFC 9110 section 11: the scheme is case-insensitive, the token is not; RFC 6750's challenge on refusals. */
        @Test
        void theSchemeIsCaseInsensitiveAndEachRefusalSaysWhy(HttpTestClient http) {
            for (String header : List.of("Bearer " + TOKEN, "bearer " + TOKEN, "BEARER  " + TOKEN)) {
                assertThat(http.request("GET", "/dump", null, null, "Authorization", header)
                                .status())
                        .as(header)
                        .isEqualTo(200);
            }
            HttpTestClient.Response missing = get(http, "/dump", null).assertStatus(401);
            assertThat(missing.error()).contains("missing");
            assertThat(missing.challenge()).isEqualTo("Bearer");
            String basicCredentials =
                    Base64.getEncoder().encodeToString(("user:" + TOKEN).getBytes(StandardCharsets.UTF_8));
            HttpTestClient.Response basic = http.request(
                            "GET", "/dump", null, null, "Authorization", "Basic " + basicCredentials)
                    .assertStatus(401);
            assertThat(basic.error()).contains("Bearer scheme");
            assertThat(basic.challenge()).isEqualTo("Bearer");
            // `-H "Authorization: Bearer $TOKEN"` with TOKEN unset: the scheme is right, it is the token that is
            // missing
            for (String header : List.of("Bearer", "bearer")) {
                HttpTestClient.Response empty = http.request("GET", "/dump", null, null, "Authorization", header)
                        .assertStatus(401);
                assertThat(empty.error())
                        .as(header)
                        .isEqualTo("the Authorization header has the Bearer scheme but no token after it");
                assertThat(empty.challenge()).isEqualTo("Bearer");
            }
            for (String header : List.of("Bearer " + TOKEN.toUpperCase(Locale.ROOT), "Bearer nope", TOKEN)) {
                HttpTestClient.Response r = http.request("GET", "/dump", null, null, "Authorization", header)
                        .assertStatus(401);
                if (header.startsWith("Bearer")) {
                    assertThat(r.error()).as(header).isEqualTo("invalid bearer token");
                    assertThat(r.challenge()).isEqualTo("Bearer error=\"invalid_token\"");
                } else {
                    assertThat(r.error()).as(header).contains("Bearer scheme");
                }
            }
        }
    }

    @Test
    void tokenComesFromAFileOrTheEnvironment(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("token");
        Files.writeString(file, "  from-file\n");
        assertThat(IndexerCli.parse(
                                new String[] {"--auth-token-file", file.toString()},
                                Map.of("KV_INDEXER_AUTH_TOKEN", "from-env"))
                        .config()
                        .authToken())
                .isEqualTo("from-file");
        assertThat(IndexerCli.parse(new String[0], Map.of("KV_INDEXER_AUTH_TOKEN", "from-env"))
                        .config()
                        .authToken())
                .isEqualTo("from-env");
        assertThat(IndexerCli.parse(new String[0], Map.of()).config().authToken())
                .isNull();
        Files.writeString(file, "   \n");
        assertThatThrownBy(() -> IndexerCli.parse(new String[] {"--auth-token-file", file.toString()}, Map.of()))
                .hasMessageContaining("--auth-token-file");
        assertThatThrownBy(() -> IndexerCli.parse(
                        new String[] {"--auth-token-file", dir.resolve("none").toString()}, Map.of()))
                .hasMessageContaining("--auth-token-file")
                .hasMessageContaining("no such file or directory");
    }

    /**
     * A token is one line of printable ASCII (no header carries two, or other characters): a file or a variable of
     * anything else is refused at start, saying so.
     */
    @Test
    void aTokenOfMoreThanOneLineIsRefusedAtStart(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("token"), "line1\nline2\n");
        assertThatThrownBy(() -> IndexerCli.parse(new String[] {"--auth-token-file", file.toString()}, Map.of()))
                .isInstanceOf(ConfigException.class)
                .hasMessage("invalid value for --auth-token-file: " + file + " holds 2 lines; a bearer token is one"
                        + " line");
        Files.writeString(file, "one-line\r\n");
        assertThat(IndexerCli.parse(new String[] {"--auth-token-file", file.toString()}, Map.of())
                        .config()
                        .authToken())
                .isEqualTo("one-line");
        assertThatThrownBy(() -> IndexerCli.parse(new String[0], Map.of("KV_INDEXER_AUTH_TOKEN", "line1\nline2\n")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("KV_INDEXER_AUTH_TOKEN holds 2 lines; a bearer token is one line");
        assertThat(IndexerCli.parse(new String[0], Map.of("KV_INDEXER_AUTH_TOKEN", "from-env\n"))
                        .config()
                        .authToken())
                .isEqualTo("from-env");
        // nor a character outside printable ASCII: no client could send it
        Files.writeString(file, "t\u00f6ken\n");
        assertThatThrownBy(() -> IndexerCli.parse(new String[] {"--auth-token-file", file.toString()}, Map.of()))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith(
                        "invalid value for --auth-token-file: " + file + " holds U+00F6 at character 2;");
        assertThatThrownBy(() -> IndexerCli.parse(new String[0], Map.of("KV_INDEXER_AUTH_TOKEN", "t\u20acken")))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("KV_INDEXER_AUTH_TOKEN holds U+20AC at character 2;");
    }

    @Test
    void peerRecoverySendsTheToken() throws Exception {
        try (EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults());
                IndexerApp first = IndexerApp.start(IndexerConfig.defaults().with(c -> c.authToken = TOKEN));
                HttpTestClient a = new HttpTestClient(first.baseUrl())) {
            post(
                            a,
                            "/register",
                            "{\"instance_id\":1,\"endpoint\":\"" + sim.endpoint()
                                    + "\",\"model_name\":\"m\",\"block_size\":4}",
                            TOKEN)
                    .assertStatus(201);
            await().atMost(Duration.ofSeconds(30)).until(() -> sim.subscriptions() >= 1);
            sim.storeSequence(new int[] {1, 2, 3, 4, 5, 6, 7, 8}, 4).get(30, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> get(a, "/dump", TOKEN).body().contains("block_hash"));
            String dump = get(a, "/dump", TOKEN).body();
            IndexerConfig peerCfg = IndexerConfig.defaults().with(c -> {
                c.peers = List.of(first.baseUrl());
                c.recoveryDelay = Duration.ZERO;
            });
            try (IndexerApp withToken = IndexerApp.start(peerCfg.with(c -> c.authToken = TOKEN));
                    IndexerApp without = IndexerApp.start(peerCfg);
                    HttpTestClient b = new HttpTestClient(withToken.baseUrl());
                    HttpTestClient c = new HttpTestClient(without.baseUrl())) {
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> b.get("/ready").status() == 200
                                && c.get("/ready").status() == 200);
                assertThat(FaultHarnessAccess.canonical(get(b, "/dump", TOKEN).body()))
                        .isEqualTo(FaultHarnessAccess.canonical(dump));
                // the replica without the token was refused by its peer and starts empty
                assertThat(c.get("/dump").body()).isEqualTo("{}");
            }
        }
    }

    @Test
    void limitsAreEnforcedWithTypedErrors() throws Exception {
        ServiceLimits limits = ServiceLimits.DEFAULTS.with(l -> {
            l.maxQueryTokens = 8;
            l.maxRanksPerInstance = 2;
            l.maxListeners = 3;
            l.maxPeers = 2;
        });
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults().with(c -> c.limits = limits));
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            http.post("/register", reg(1, 0)).assertStatus(201);
            http.post("/register", reg(1, 1)).assertStatus(201);
            HttpTestClient.Response third = http.post("/register", reg(1, 2));
            third.assertStatus(409);
            assertThat(third.error()).contains("--max-ranks-per-instance");
            http.post("/register", reg(2, 0)).assertStatus(201);
            HttpTestClient.Response fourth = http.post("/register", reg(3, 0));
            fourth.assertStatus(409);
            assertThat(fourth.error()).contains("--max-listeners");
            assertThat(http.get("/workers").json()).hasSize(2);

            http.post("/query", "{\"model_name\":\"m\",\"token_ids\":[1,2,3,4,5,6,7,8]}")
                    .assertStatus(200);
            HttpTestClient.Response tooMany =
                    http.post("/query", "{\"model_name\":\"m\",\"token_ids\":[1,2,3,4,5,6,7,8,9]}");
            tooMany.assertStatus(413);
            assertThat(tooMany.error()).contains("token_ids", "--max-query-tokens");
            http.post("/query_by_hash", "{\"model_name\":\"m\",\"block_hashes\":[1,2,3,4,5,6,7,8,9]}")
                    .assertStatus(413);

            http.post("/register_peer", "{\"url\":\"http://127.0.0.1:1\"}").assertStatus(201);
            http.post("/register_peer", "{\"url\":\"https://peer.example:8443\"}")
                    .assertStatus(201);
            assertThat(http.post("/register_peer", "{\"url\":\"http://127.0.0.1:1\"}")
                            .status())
                    .as("a duplicate does not count")
                    .isEqualTo(201);
            HttpTestClient.Response peer3 = http.post("/register_peer", "{\"url\":\"http://127.0.0.1:3\"}");
            peer3.assertStatus(409);
            assertThat(peer3.error()).contains("--max-peers");
            // and the OpenAPI document the server serves lists that answer (paths sit at two spaces)
            String document = http.get("/openapi.yaml").body();
            int at = document.indexOf("\n  /register_peer:");
            String registerPeer = document.substring(at, document.indexOf("\n  /", at + 1));
            assertThat(registerPeer).contains("\"409\":", "--max-peers");
        }
    }

    @Test
    void peerUrlsAndZmqEndpointsAreValidatedBeforeUse() throws Exception {
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            for (String bad : List.of(
                    "file:///etc/passwd",
                    "ftp://h/x",
                    "jar:file:/x!/",
                    "http://",
                    "http://:80",
                    "http://h:0",
                    "http://h:99999",
                    "http://user:pw@h:1",
                    "http://h:1/?q=1",
                    "http://h:1/#f",
                    "not a url",
                    "")) {
                HttpTestClient.Response r = http.post("/register_peer", "{\"url\":\"" + bad + "\"}");
                assertThat(r.status()).as(bad).isEqualTo(422);
                assertThat(r.error()).as(bad).isNotBlank();
            }
            assertThat(http.get("/peers").json()).isEmpty();
            for (String bad : List.of("http://127.0.0.1:5557", "tcp://", "tcp://h:70000", "udp://h:1", "tcp://h", "")) {
                HttpTestClient.Response r = http.post(
                        "/register",
                        "{\"instance_id\":1,\"endpoint\":\"" + bad + "\",\"model_name\":\"m\",\"block_size\":4}");
                assertThat(r.status()).as(bad).isBetween(400, 499);
                assertThat(r.error()).as(bad).isNotBlank();
            }
            assertThat(http.get("/workers").json()).isEmpty();
        }
        assertThatThrownBy(() -> IndexerCli.parse(new String[] {"--peers", "file:///etc/passwd"}, Map.of()))
                .hasMessageContaining("--peers");
        assertThatThrownBy(() -> IndexerCli.parse(
                        new String[] {"--max-peers", "1", "--peers", "http://a:1,http://b:1"}, Map.of()))
                .hasMessageContaining("--max-peers");
        assertThatThrownBy(() -> IndexerCli.parse(new String[] {"--max-listeners", "0"}, Map.of()))
                .hasMessageContaining("--max-listeners");
    }

    private static String reg(long id, int rank) {
        return "{\"instance_id\":" + id + ",\"dp_rank\":" + rank + ",\"endpoint\":\"tcp://127.0.0.1:9\","
                + "\"model_name\":\"m\",\"block_size\":4}";
    }
}

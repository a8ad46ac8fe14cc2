package io.kvindexer.indexer.recovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerCli;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * IPv6 (issue 13): a replica on {@code ::1} has a bracketed URL; peers recover from it through {@code --peers}
 * and {@code --peers-dns}; {@code /register_peer} takes bracketed IPv6 URLs and {@code /register} bracketed IPv6
 * ZeroMQ endpoints.
 */
class Ipv6PeersTest {

    private static IndexerApp start(String... args) throws Exception {
        return IndexerApp.start(
                IndexerCli.parse(args, Map.of()).config().with(c -> c.recoveryDelay = Duration.ofMillis(50)));
    }

    @Test
    void replicasOnIpv6RecoverFromEachOther() throws Exception {
        try (IndexerApp first = start("--host", "::1", "--port", "0");
                HttpTestClient a = new HttpTestClient(first.baseUrl());
                EngineSimulator engine = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            assertThat(first.baseUrl()).isEqualTo("http://[::1]:" + first.port());
            Replicas.seed(a, engine);

            try (IndexerApp byUrl = start("--host", "127.0.0.1", "--port", "0", "--peers", first.baseUrl());
                    HttpTestClient b = new HttpTestClient(byUrl.baseUrl());
                    IndexerApp byName =
                            start("--host", "127.0.0.1", "--port", "0", "--peers-dns", "[::1]:" + first.port());
                    HttpTestClient c = new HttpTestClient(byName.baseUrl())) {
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> b.get("/ready").status() == 200
                                && c.get("/ready").status() == 200);
                assertThat(Replicas.score(b)).isEqualTo(8);
                assertThat(Replicas.score(c)).isEqualTo(8);
                assertThat(b.get("/peers").json().get(0).asText()).isEqualTo(first.baseUrl());
            }
        }
    }

    @Test
    void bracketedIpv6IsAcceptedWhereAnAddressIsTaken() throws Exception {
        try (IndexerApp app = start("--host", "127.0.0.1", "--port", "0");
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            http.post("/register_peer", "{\"url\":\"http://[fd00::12]:8090\"}").assertStatus(201);
            HttpTestClient.Response bare = http.post("/register_peer", "{\"url\":\"http://fd00::12:8090\"}");
            bare.assertStatus(422);
            assertThat(bare.error()).contains("bracket an IPv6 address");
            assertThat(http.get("/peers").body()).isEqualTo("[\"http://[fd00::12]:8090\"]");
            http.post("/deregister_peer", "{\"url\":\"http://[fd00::12]:8090\"}")
                    .assertStatus(200);

            http.post(
                            "/register",
                            "{\"instance_id\":6,\"endpoint\":\"tcp://[fd00::5]:5557\","
                                    + "\"replay_endpoint\":\"tcp://[fd00::5]:5600\",\"model_name\":\"m\",\"block_size\":4}")
                    .assertStatus(201);
            JsonNode w = http.get("/workers").json().get(0);
            assertThat(w.get("endpoints").get("0").asText()).isEqualTo("tcp://[fd00::5]:5557");
            HttpTestClient.Response unclosed = http.post(
                    "/register",
                    "{\"instance_id\":7,"
                            + "\"endpoint\":\"tcp://[fd00::5:5557\",\"model_name\":\"m\",\"block_size\":4}");
            unclosed.assertStatus(400);
            assertThat(unclosed.error()).isEqualTo("invalid ZMQ endpoint `tcp://[fd00::5:5557`: missing closing `]`");
        }
    }

    @Test
    void peersFlagTakesBracketedIpv6AndRefusesBareIpv6() throws Exception {
        assertThat(IndexerCli.parse(new String[] {"--peers", "http://[::1]:8090,http://10.0.0.1:8090"}, Map.of())
                        .config()
                        .peers())
                .containsExactly("http://[::1]:8090", "http://10.0.0.1:8090");
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> IndexerCli.parse(new String[] {"--peers", "http://::1:8090"}, Map.of()))
                .hasMessage("invalid value for --peers: invalid peer URL `http://::1:8090`: bracket an IPv6 address,"
                        + " e.g. http://[::1]:8090");
    }
}

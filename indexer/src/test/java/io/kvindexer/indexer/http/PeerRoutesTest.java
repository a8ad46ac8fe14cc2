package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** {@code /register_peer}, {@code /deregister_peer}, {@code /peers} (compatibility.md, HTTP API): set semantics, exact strings. */
@IndexerRoutes
abstract class PeerRoutesTest {

    @Test
    void peersRoundTrip(HttpTestClient http) {
        assertThat(http.get("/peers").body()).isEqualTo("[]");
        HttpTestClient.Response r = http.post("/register_peer", "{\"url\":\"http://peer:8091\"}");
        assertThat(r.status()).isEqualTo(201);
        assertThat(r.body()).isEqualTo("{\"status\":\"ok\"}");
        assertThat(http.post("/register_peer", "{\"url\":\"http://peer:8091\"}").status())
                .isEqualTo(201);
        assertThat(http.post("/register_peer", "{\"url\":\"http://peer:8092/\"}")
                        .status())
                .isEqualTo(201);
        assertThat(http.get("/peers").body()).isEqualTo("[\"http://peer:8091\",\"http://peer:8092/\"]");

        r = http.post("/deregister_peer", "{\"url\":\"http://peer:8091\"}");
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("{\"status\":\"ok\"}");
        r = http.post("/deregister_peer", "{\"url\":\"http://peer:8091\"}");
        assertThat(r.status()).isEqualTo(404);
        assertThat(r.body()).isEqualTo("{\"error\":\"peer not found\"}");
        assertThat(http.get("/peers").body()).isEqualTo("[\"http://peer:8092/\"]");
    }
}

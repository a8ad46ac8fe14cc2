package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** {@code /register_peer}, {@code /deregister_peer}, {@code /peers} (compatibility.md, HTTP API): set semantics, exact strings. */
@IndexerRoutes
abstract class PeerRoutesTest {

    @Test
    void peersRoundTrip(HttpTestClient http) {
        assertThat(http.get("/peers").body()).isEqualTo("[]");
        http.post("/register_peer", "{\"url\":\"http://peer:8091\"}").assertOk(201);
        http.post("/register_peer", "{\"url\":\"http://peer:8091\"}").assertStatus(201);
        http.post("/register_peer", "{\"url\":\"http://peer:8092/\"}").assertStatus(201);
        assertThat(http.get("/peers").body()).isEqualTo("[\"http://peer:8091\",\"http://peer:8092/\"]");

        http.post("/deregister_peer", "{\"url\":\"http://peer:8091\"}").assertOk(200);
        assertThat(http.post("/deregister_peer", "{\"url\":\"http://peer:8091\"}")
                        .assertStatus(404)
                        .body())
                .isEqualTo("{\"error\":\"peer not found\"}");
        assertThat(http.get("/peers").body()).isEqualTo("[\"http://peer:8092/\"]");
    }
}

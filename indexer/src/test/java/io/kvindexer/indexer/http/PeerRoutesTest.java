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
        r.assertStatus(201);
        assertThat(r.body()).isEqualTo("{\"status\":\"ok\"}");
        http.post("/register_peer", "{\"url\":\"http://peer:8091\"}").assertStatus(201);
        http.post("/register_peer", "{\"url\":\"http://peer:8092/\"}").assertStatus(201);
        assertThat(http.get("/peers").body()).isEqualTo("[\"http://peer:8091\",\"http://peer:8092/\"]");

        r = http.post("/deregister_peer", "{\"url\":\"http://peer:8091\"}");
        r.assertStatus(200);
        assertThat(r.body()).isEqualTo("{\"status\":\"ok\"}");
        r = http.post("/deregister_peer", "{\"url\":\"http://peer:8091\"}");
        r.assertStatus(404);
        assertThat(r.body()).isEqualTo("{\"error\":\"peer not found\"}");
        assertThat(http.get("/peers").body()).isEqualTo("[\"http://peer:8092/\"]");
    }
}

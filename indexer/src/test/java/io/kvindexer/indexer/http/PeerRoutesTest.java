package io.kvindexer.indexer.http;

import io.helidon.webserver.testing.junit5.RoutingTest;
import io.helidon.webserver.testing.junit5.ServerTest;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code /register_peer}, {@code /deregister_peer}, {@code /peers} (spec §5.9): set semantics, exact strings. */
class PeerRoutesTest {

    abstract static class Cases {

        @Test
        void peersRoundTrip(HttpTestClient http) {
            assertThat(http.get("/peers").body()).isEqualTo("[]");
            HttpTestClient.Response r = http.post("/register_peer", "{\"url\":\"http://peer:8091\"}");
            assertThat(r.status()).isEqualTo(201);
            assertThat(r.body()).isEqualTo("{\"status\":\"ok\"}");
            assertThat(http.post("/register_peer", "{\"url\":\"http://peer:8091\"}").status()).isEqualTo(201);
            assertThat(http.post("/register_peer", "{\"url\":\"http://peer:8092/\"}").status()).isEqualTo(201);
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

    @Nested
    @ServerTest
    @IndexerRoutes
    class OverSocket extends Cases {
    }

    @Nested
    @RoutingTest
    @IndexerRoutes
    class InMemory extends Cases {
    }
}

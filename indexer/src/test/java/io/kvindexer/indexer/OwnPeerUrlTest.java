package io.kvindexer.indexer;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.http.HttpTestClient;
import org.junit.jupiter.api.Test;

/**
 * {@code /register_peer} refuses a URL that leads back to the replica itself (it would recover from itself), as far
 * as it can tell: an address it answers on, at its own port. Anything else is kept, as before.
 */
class OwnPeerUrlTest {

    private static void register(HttpTestClient http, String url, int status) {
        HttpTestClient.Response r = http.post("/register_peer", "{\"url\":\"" + url + "\"}");
        assertThat(r.status()).as(url).isEqualTo(status);
        if (status == 422) {
            assertThat(r.error())
                    .isEqualTo("peer URL `" + url + "` is this replica's own address: it cannot recover from itself");
        }
    }

    @Test
    void aReplicaBoundToOneAddressRefusesThatAddressAtItsPort() throws Exception {
        try (IndexerApp app = IndexerApp.start("--host", "127.0.0.1", "--port", "0");
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            int port = app.port();
            register(http, "http://127.0.0.1:" + port, 422);
            register(http, "https://127.0.0.1:" + port + "/", 422);
            register(http, "http://127.0.0.1:" + (port == 65535 ? 1 : port + 1), 201);
            register(http, "http://127.0.0.2:" + port, 201); // another replica may listen there on the same port
            register(http, "http://127.0.0.1", port == 80 ? 422 : 201);
            assertThat(http.get("/peers").json()).hasSize(port == 80 ? 2 : 3);
        }
    }

    @Test
    void aReplicaOnTheWildcardRefusesEveryAddressOfThisHostAtItsPort() throws Exception {
        try (IndexerApp app = IndexerApp.start("--host", "0.0.0.0", "--port", "0");
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            int port = app.port();
            register(http, "http://127.0.0.1:" + port, 422);
            register(http, "http://127.0.0.2:" + port, 422); // all of 127/8 is loopback, answered on
            register(http, "http://localhost:" + port, 422);
            java.net.InetAddress own = java.net.InetAddress.getLocalHost();
            register(http, "http://" + java.net.InetAddress.getLoopbackAddress().getHostAddress() + ":" + port, 422);
            if (!own.isLoopbackAddress()) {
                register(http, "http://" + own.getHostAddress() + ":" + port, 422);
            }
            register(http, "http://127.0.0.1:" + (port == 65535 ? 1 : port + 1), 201);
            register(http, "http://peer.invalid:" + port, 201); // does not resolve: kept, as before
            assertThat(http.get("/peers").json()).hasSize(2);
        }
    }
}

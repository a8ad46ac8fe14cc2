package io.kvindexer.indexer.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.helidon.webserver.WebServer;
import io.helidon.webserver.testing.junit5.ServerTest;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.common.ServiceLimits;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.http.IndexerRoutes;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * A client that sends the headers and part of a body, then nothing, without closing: the server answers 408 with a
 * JSON error and closes the connection once {@code --request-read-timeout-ms} has passed, and serves other clients
 * meanwhile. The client's own read timeout (60 s) is only the ceiling that turns a hang into a failure.
 */
class StalledBodyTest {

    private static final Duration DEADLINE = Duration.ofMillis(1500);

    @IndexerRoutes.Config
    static IndexerConfig config() {
        return IndexerConfig.defaults()
                .with(c -> c.limits = ServiceLimits.DEFAULTS.with(l -> l.requestReadTimeout = DEADLINE));
    }

    // one indexer per test: both register the same instance
    @Nested
    @ServerTest
    @IndexerRoutes
    class Stalled {

        @Test
        void stalledBodyGets408AndOthersAreServedMeanwhile(HttpTestClient http, WebServer server) throws Exception {
            try (Socket stalled = new Socket()) {
                stalled.connect(new InetSocketAddress("127.0.0.1", server.port()));
                stalled.setSoTimeout(60_000);
                String part = "{\"instance_id\":1,\"endpoint\":\"tcp://127.0.0.1:9\",\"model_";
                OutputStream out = stalled.getOutputStream();
                out.write(("POST /register HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                + "Content-Length: 200\r\n\r\n" + part)
                        .getBytes(StandardCharsets.US_ASCII));
                out.flush();

                // while that body is stalled, a normal client registers and queries on its own connection
                HttpTestClient.Response reg = http.post(
                        "/register",
                        "{\"instance_id\":2,\"endpoint\":"
                                + "\"tcp://127.0.0.1:9\",\"model_name\":\"m\",\"block_size\":4}");
                reg.assertStatus(201);
                HttpTestClient.Response query = http.post("/query", "{\"model_name\":\"m\",\"token_ids\":[1,2,3,4]}");
                query.assertStatus(200);
                assertThat(query.json().has("scores")).isTrue();

                String reply = readUntilClosed(stalled.getInputStream());
                assertThat(reply).startsWith("HTTP/1.1 408");
                assertThat(reply).containsIgnoringCase("connection: close");
                assertThat(reply).contains("{\"error\":\"request body not received within 1500 ms");

                // the stalled registration was not applied; the normal one was, and the server still answers
                HttpTestClient.Response workers = http.get("/workers");
                workers.assertStatus(200);
                assertThat(workers.body()).contains("\"instance_id\":2").doesNotContain("\"instance_id\":1");
                http.get("/health").assertStatus(200);
            }
        }
    }

    @Nested
    @ServerTest
    @IndexerRoutes
    class InTime {

        @Test
        void bodiesReadInTimeAreNeverCutOff(HttpTestClient http) {
            // requests on keep-alive connections for three deadlines' worth of time: a disarmed deadline must never
            // fire into a later request of the same connection
            http.post(
                            "/register",
                            "{\"instance_id\":2,\"endpoint\":\"tcp://127.0.0.1:9\","
                                    + "\"model_name\":\"m\",\"block_size\":4}")
                    .assertStatus(201);
            long end = System.nanoTime() + DEADLINE.multipliedBy(3).toNanos();
            int served = 0;
            while (System.nanoTime() < end || served < 50) {
                HttpTestClient.Response q = http.post("/query", "{\"model_name\":\"m\",\"token_ids\":[1,2,3,4]}");
                assertThat(q.status()).as("request %d: %s", served, q.body()).isEqualTo(200);
                served++;
            }
            http.get("/health").assertStatus(200);
        }
    }

    /** Everything the server sends until it closes the connection (the 60 s socket timeout fails the test). */
    private static String readUntilClosed(InputStream in) throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        byte[] chunk = new byte[4096];
        try {
            int n;
            while ((n = in.read(chunk)) >= 0) {
                buf.write(chunk, 0, n);
            }
        } catch (SocketTimeoutException e) {
            throw new AssertionError(
                    "the server neither answered nor closed within 60 s; got: " + buf.toString(StandardCharsets.UTF_8),
                    e);
        } catch (IOException e) {
            // a reset after the answer still counts as closed; what was read is checked by the caller
        }
        return buf.toString(StandardCharsets.UTF_8);
    }
}

package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.common.ServiceLimits;
import io.kvindexer.indexer.common.Watchdog;
import java.io.BufferedInputStream;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Connections that end after one request ({@code Connection: close}, or a client that opens a connection per
 * request, as a health probe without keep-alive does) must not stay in memory: each one's read deadline was kept by
 * the {@link Watchdog} until its next wake (up to a minute), and with it the connection's thread, the connection and
 * its buffers; a churn of 6,000 connections held about 100 MB. The real server ({@link IndexerApp}), whose
 * connections let go of their deadline as they end. The read timeout is long, so nothing else wakes the watchdog
 * while the test runs: the old code kept every round's deadlines past the round's bound (its wakes are a minute
 * apart, the rounds together take less).
 */
class ClosedConnectionsTest {

    private static final int ROUNDS = 3;
    private static final int CONNECTIONS = 100;
    /** how long the closed connections' deadlines may stay watched: far past what letting go takes */
    private static final Duration BOUND = Duration.ofSeconds(10);

    private static IndexerApp server;

    @BeforeAll
    static void start() throws Exception {
        server = IndexerApp.start(IndexerConfig.defaults()
                .with(c -> c.limits = ServiceLimits.DEFAULTS.with(l -> l.requestReadTimeout = Duration.ofMinutes(30))));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void theWatchdogLetsGoOfClosedConnectionsAtOnce() throws Exception {
        for (int round = 0; round < ROUNDS; round++) {
            int before = Watchdog.watched();
            for (int i = 0; i < CONNECTIONS; i++) {
                oneRequest(i % 2 == 0 ? "Connection: close\r\n" : "");
            }
            int round1 = round + 1;
            await().atMost(BOUND)
                    .pollInterval(Duration.ofMillis(50))
                    .untilAsserted(() -> assertThat(Watchdog.watched())
                            .as("deadlines watched after round %d's %d closed connections", round1, CONNECTIONS)
                            .isLessThanOrEqualTo(before));
        }
    }

    /** One request on a connection of its own, which the client closes once the answer is in. */
    private static void oneRequest(String header) throws Exception {
        try (Socket s = RawHttp.connect(server.baseUrl(), 30_000)) {
            s.getOutputStream()
                    .write(("GET /health HTTP/1.1\r\nHost: x\r\n" + header + "\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
            InputStream in = new BufferedInputStream(s.getInputStream());
            assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 200");
        }
    }
}

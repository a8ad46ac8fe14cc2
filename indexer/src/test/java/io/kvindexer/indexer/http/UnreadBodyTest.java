package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.common.ServiceLimits;
import java.io.BufferedInputStream;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A request answered before its body was read to its end (refused at once: 415, 406, 413, 405): Helidon reads the
 * rest of the body after the answer, to keep the connection. A client that declared a body and then stalls must not
 * hold the connection for longer than {@code --request-read-timeout-ms} (it held it for good: no idle timeout runs
 * then); one that sends its whole body keeps a usable connection. The real server ({@link IndexerApp}): the read of
 * the rest is bounded through its connections' reads ({@code TimedHttp1}). The cases mostly wait out the deadline, each
 * on its own connection, so they run two at once.
 */
class UnreadBodyTest {

    private static final Duration DEADLINE = Duration.ofMillis(1500);
    /** how long the test waits for an answer or a close: far past the deadline */
    private static final int PATIENCE_MS = 30_000;

    private static IndexerApp server;

    @BeforeAll
    static void start() throws Exception {
        server = IndexerApp.start(IndexerConfig.defaults()
                .with(c -> c.limits = ServiceLimits.DEFAULTS.with(l -> l.requestReadTimeout = DEADLINE)));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    /** Each row: the request's method and path, its extra header, its Content-Type, the answer. */
    @Execution(ExecutionMode.CONCURRENT)
    @ParameterizedTest(name = "{0} {1} {2} {3}: {4}")
    @CsvSource(delimiter = '|', textBlock = """
            POST | /query | Accept: application/json | text/plain       | 415
            POST | /query | Accept: */*;q=0          | application/json | 406
            POST | /query | X-Big: 1                 | application/json | 413
            GET  | /query | Accept: application/json | application/json | 405
            """)
    void aStalledBodyAnsweredBeforeItWasReadClosesTheConnectionInTime(
            String method, String path, String header, String type, int status) throws Exception {
        long declared = status == 413 ? IndexerConfig.DEFAULT_MAX_QUERY_BODY + 1 : 100;
        try (Socket s = RawHttp.connect(server.baseUrl(), PATIENCE_MS)) {
            s.getOutputStream()
                    .write(head(method, path, header, type, declared)
                            .concat("{\"model_na")
                            .getBytes(StandardCharsets.US_ASCII));
            InputStream in = new BufferedInputStream(s.getInputStream());
            assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 " + status);
            long start = System.nanoTime();
            assertThat(RawHttp.closed(in))
                    .as("the connection is closed once the rest of the body is late")
                    .isTrue();
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(DEADLINE.dividedBy(2));
        }
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aWholeBodyAnsweredBeforeItWasReadKeepsAUsableConnection() throws Exception {
        String body = "{\"model_name\":\"m\",\"token_ids\":[1,2,3]}";
        try (Socket s = RawHttp.connect(server.baseUrl(), PATIENCE_MS)) {
            InputStream in = new BufferedInputStream(s.getInputStream());
            s.getOutputStream()
                    .write((head("POST", "/query", "Accept: application/json", "text/plain", body.length()) + body)
                            .getBytes(StandardCharsets.US_ASCII));
            assertThat(RawHttp.readResponse(in))
                    .startsWith("HTTP/1.1 415")
                    .containsIgnoringCase("connection: keep-alive");
            Thread.sleep(DEADLINE.multipliedBy(2).toMillis()); // idle past the deadline: nothing times it
            s.getOutputStream().write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 200");
        }
    }

    /**
     * While a stop is coming every answer says {@code Connection: close}, and Helidon then skips the rest of an unread
     * body but goes on reading the connection: the body's bytes were taken for the next request (here a request
     * smuggled in a refused body got answered). The connection is closed instead.
     */
    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void anUnreadBodyIsNeverTakenForARequestWhenTheAnswerSaysClose() throws Exception {
        String smuggled = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
        try (IndexerApp stopping = IndexerApp.start(IndexerConfig.defaults());
                Socket s = new Socket()) {
            stopping.gate().shuttingDown();
            s.connect(new InetSocketAddress(
                    "127.0.0.1", java.net.URI.create(stopping.baseUrl()).getPort()));
            s.setSoTimeout(PATIENCE_MS);
            s.getOutputStream()
                    .write((head("POST", "/query", "Accept: application/json", "text/plain", smuggled.length())
                                    + smuggled)
                            .getBytes(StandardCharsets.US_ASCII));
            InputStream in = new BufferedInputStream(s.getInputStream());
            assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 415").containsIgnoringCase("connection: close");
            assertThat(new String(in.readAllBytes(), StandardCharsets.US_ASCII))
                    .as("nothing after the answer: the connection is closed")
                    .isEmpty();
        }
    }

    /**
     * Requests written at once on one keep-alive connection are answered in order, each as it would be alone: an
     * unread refused body is skipped, not parsed as a request, and what follows a body's declared length is the next
     * request.
     */
    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void pipelinedRequestsAreAnsweredInOrder() throws Exception {
        String query = "{\"model_name\":\"m\",\"token_ids\":[1,2,3]}";
        String smuggled = "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n";
        String requests = head("POST", "/query", "Accept: application/json", "application/json", query.length())
                + query
                + "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
                + head("POST", "/query", "Accept: application/json", "text/plain", smuggled.length())
                + smuggled
                + head("POST", "/register", "Accept: application/json", "application/json", 3)
                + "{x}"
                + head("POST", "/query", "Accept: application/json", "application/json", query.length())
                + query + "GET /peers HTTP/1.1\r\nHost: x\r\n\r\n" // past the declared length: a request
                + "GET /workers HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
        try (Socket s = RawHttp.connect(server.baseUrl(), PATIENCE_MS)) {
            s.getOutputStream().write(requests.getBytes(StandardCharsets.US_ASCII));
            InputStream in = new BufferedInputStream(s.getInputStream());
            assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 404").contains("no indexer for model=m");
            assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 200");
            assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 415");
            assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 400").contains("invalid JSON");
            assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 404").contains("no indexer for model=m");
            assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 200").endsWith("[]");
            assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 200").endsWith("[]");
            assertThat(RawHttp.closed(in)).isTrue();
        }
    }

    private static String head(String method, String path, String header, String type, long length) {
        return method + " " + path + " HTTP/1.1\r\nHost: x\r\n" + header + "\r\nContent-Type: " + type
                + "\r\nContent-Length: " + length + "\r\n\r\n";
    }
}

package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * HEAD wherever GET is (RFC 9110 section 9.3.2): the status and headers the GET answers, its length as
 * {@code Content-Length} (but for the dump's), and no content: the next answer on the connection follows the head at once. On the real
 * server ({@link IndexerApp}), over a raw socket, as a load balancer's probe or {@code curl -I} sends it.
 */
class HeadRequestsTest {

    private static final int PATIENCE_MS = 30_000;
    private static final String NEXT = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";

    private static IndexerApp server;

    @BeforeAll
    static void start() throws Exception {
        server = IndexerApp.start(IndexerConfig.defaults());
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    /** Every GET route (a console file for {@code /ui/{file}}), and GET answers that are errors (400, 404, 406). */
    @ParameterizedTest(name = "HEAD {0}")
    @ValueSource(
            strings = {
                "/health",
                "/ready",
                "/workers",
                "/workers?model_name=m",
                "/metrics",
                "/dump",
                "/dump?registrations=maybe",
                "/peers",
                "/stats",
                "/prefixes",
                "/openapi.yaml",
                "/ui",
                "/ui/",
                "/ui/index.html",
                "/ui/nope.html",
                "/no/such/route"
            })
    void headAnswersWhatGetAnswersWithoutTheContent(String path) throws IOException {
        try (Socket s = RawHttp.connect(server.baseUrl(), PATIENCE_MS)) {
            InputStream in = new BufferedInputStream(s.getInputStream());
            send(s, "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n");
            Response get = Response.read(in, false);
            send(s, "HEAD " + path + " HTTP/1.1\r\nHost: x\r\n\r\n" + NEXT);
            Response head = Response.read(in, true);
            assertThat(head.status()).as("HEAD %s: %s", path, head.headers()).isEqualTo(get.status());
            assertThat(head.header("content-type")).isEqualTo(get.header("content-type"));
            assertThat(head.header("allow")).isEqualTo(get.header("allow"));
            assertThat(head.header("location")).isEqualTo(get.header("location"));
            if (path.equals("/dump")) {
                // its length is known only by writing it (HeadDumpTest): it is framed as the GET's stream
                assertThat(head.header("content-length")).isNull();
                assertThat(head.header("transfer-encoding")).isEqualTo("chunked");
            } else if (path.equals("/metrics")) {
                // its counters moved between the two: a length, not the same one
                assertThat(Long.parseLong(head.header("content-length"))).isPositive();
            } else {
                assertThat(head.header("content-length"))
                        .as("the length of the GET's content")
                        .isEqualTo(String.valueOf(get.body().length));
            }
            // no content came: the next bytes are the next request's answer
            Response next = Response.read(in, false);
            assertThat(next.status()).isEqualTo(200);
        }
    }

    /** A GET route's 405 names HEAD among its methods; a POST route's does not take HEAD. */
    @Test
    void allowNamesHeadBesideGet() throws IOException {
        try (Socket s = RawHttp.connect(server.baseUrl(), PATIENCE_MS)) {
            InputStream in = new BufferedInputStream(s.getInputStream());
            send(s, "DELETE /workers HTTP/1.1\r\nHost: x\r\n\r\n");
            Response delete = Response.read(in, false);
            assertThat(delete.status()).isEqualTo(405);
            assertThat(delete.header("allow")).isEqualTo("GET, HEAD");
            assertThat(new String(delete.body(), StandardCharsets.UTF_8))
                    .isEqualTo("{\"error\":\"DELETE is not allowed on /workers; allowed: GET, HEAD\"}");
            send(s, "HEAD /query HTTP/1.1\r\nHost: x\r\n\r\n" + NEXT);
            Response head = Response.read(in, true);
            assertThat(head.status()).isEqualTo(405);
            assertThat(head.header("allow")).isEqualTo("POST");
            assertThat(Response.read(in, false).status()).isEqualTo(200);
        }
    }

    private static void send(Socket s, String request) throws IOException {
        s.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
    }

    /** One answer: status, headers by lower-case name, content (none for a HEAD, Content-Length or chunked). */
    record Response(int status, Map<String, String> headers, byte[] body) {
        String header(String name) {
            return headers.get(name);
        }

        static Response read(InputStream in, boolean head) throws IOException {
            String statusLine = line(in);
            assertThat(statusLine).startsWith("HTTP/1.1 ");
            Map<String, String> headers = new LinkedHashMap<>();
            for (String l; !(l = line(in)).isEmpty(); ) {
                int colon = l.indexOf(':');
                headers.put(
                        l.substring(0, colon).strip().toLowerCase(Locale.ROOT),
                        l.substring(colon + 1).strip());
            }
            byte[] body;
            if (head) {
                body = new byte[0];
            } else if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
                ByteArrayOutputStream buf = new ByteArrayOutputStream();
                for (int size; (size = Integer.parseInt(line(in), 16)) > 0; ) {
                    buf.write(in.readNBytes(size));
                    line(in);
                }
                line(in);
                body = buf.toByteArray();
            } else {
                body = in.readNBytes(Integer.parseInt(headers.getOrDefault("content-length", "0")));
            }
            return new Response(Integer.parseInt(statusLine.substring(9, 12)), headers, body);
        }

        private static String line(InputStream in) throws IOException {
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            for (int b; (b = in.read()) != '\n'; ) {
                if (b < 0) {
                    throw new IOException("connection closed mid-answer: " + buf);
                }
                buf.write(b);
            }
            String s = buf.toString(StandardCharsets.ISO_8859_1);
            return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
        }
    }
}

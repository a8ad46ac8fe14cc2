package io.kvindexer.indexer.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.testing.junit5.ServerTest;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.http.IndexerHarness;
import io.kvindexer.indexer.http.IndexerRoutes;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * At least 10k malformed or hostile HTTP requests over raw sockets (broken JSON, deep nesting, huge numbers,
 * wrong types, 100 MB bodies streamed, 10 M token ids streamed, slow clients) against a running server, while a
 * checker keeps sending a normal {@code /query} and {@code /health}: every hostile request gets a 4xx with a JSON
 * {@code error} body (also where the server answers before any route: its 413 backstop, a request it cannot parse),
 * never a 5xx; every normal request succeeds.
 */
@ServerTest
@IndexerRoutes
class HttpHostileRequestFuzzTest {

    private static final String[] PATHS = {
        "/register",
        "/unregister",
        "/query",
        "/query_by_hash",
        "/register_peer",
        "/deregister_peer",
        "/test/pause_listener"
    };

    record Reply(int status, String body) {}

    @Test
    void hostileRequestsGetTypedClientErrorsAndNormalTrafficGoesOn(WebServer server) throws Exception {
        int requests = ReliabilityReport.scaled(10_000, 10);
        String baseUrl = IndexerHarness.baseUrl(server);
        try (HttpTestClient http = new HttpTestClient(baseUrl)) {
            // a real (model, tenant) so /query reaches the index; the engine does not need to exist
            http.post(
                            "/register",
                            "{\"instance_id\":1,\"endpoint\":\"tcp://127.0.0.1:9\","
                                    + "\"model_name\":\"m\",\"block_size\":4}")
                    .assertStatus(201);
            int port = server.port();
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger normalOk = new AtomicInteger();
            ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
            Thread checker = Thread.ofPlatform().name("normal-traffic").start(() -> {
                try (HttpTestClient c = new HttpTestClient(baseUrl)) {
                    while (!stop.get()) {
                        var q = c.post("/query", "{\"model_name\":\"m\",\"token_ids\":[1,2,3,4]}");
                        var h = c.get("/health");
                        if (q.status() == 200 && q.json().has("scores") && h.status() == 200) {
                            normalOk.incrementAndGet();
                        } else {
                            failures.add("normal request failed: " + q.status() + " " + q.body());
                        }
                    }
                } catch (RuntimeException e) {
                    failures.add("normal request threw " + e);
                }
            });
            Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
            List<Thread> fuzzers = new ArrayList<>();
            int threads = 4;
            for (int t = 0; t < threads; t++) {
                long seed = t;
                int share = requests / threads;
                fuzzers.add(Thread.ofPlatform().name("fuzz-" + t).start(() -> {
                    Random random = new Random(seed);
                    for (int i = 0; i < share && failures.isEmpty(); i++) {
                        String path = PATHS[random.nextInt(PATHS.length)];
                        byte[] body;
                        try {
                            body = hostileBody(random);
                        } catch (RuntimeException e) {
                            failures.add("generator: " + e);
                            break;
                        }
                        String type = random.nextInt(20) == 0 ? "text/plain" : "application/json";
                        try {
                            Reply r = request(port, "POST", path, type, body);
                            statuses.computeIfAbsent(r.status(), k -> new AtomicInteger())
                                    .incrementAndGet();
                            check(r, path, body, failures);
                        } catch (IOException | RuntimeException e) {
                            failures.add(path + " " + preview(body) + ": " + e);
                        }
                    }
                }));
            }
            // the big ones, streamed: nothing of this size is ever held in the test
            Reply huge = streamed(port, "/register", 100L * 1024 * 1024, false);
            Reply hugeChunked = streamed(port, "/query", 100L * 1024 * 1024, true);
            Reply tenMillionTokens = tokens(port, 10_000_000);
            Reply slow = slowClients(port, 16, failures);
            for (Thread f : fuzzers) {
                f.join();
            }
            stop.set(true);
            checker.join();
            assertThat(failures).as("failures").isEmpty();
            assertThat(huge.status()).isEqualTo(413);
            assertThat(hugeChunked.status()).isEqualTo(413);
            assertThat(tenMillionTokens.status()).isEqualTo(413);
            assertThat(slow.status()).isIn(400, 408);
            for (Reply r : List.of(huge, hugeChunked, tenMillionTokens, slow)) {
                assertThat(HttpTestClient.JSON.readTree(r.body()).path("error").asText())
                        .as("%d %s", r.status(), r.body())
                        .isNotBlank();
            }
            assertThat(normalOk.get()).isPositive();
            assertThat(statuses.keySet()).allMatch(s -> s >= 400 && s < 500 || s == 200 || s == 201);
            long total =
                    statuses.values().stream().mapToLong(AtomicInteger::get).sum();
            ReliabilityReport.record(new ReliabilityReport.Row(
                    "http-fuzz",
                    "hostile HTTP requests (broken JSON,"
                            + " nesting 100k deep, huge numbers, wrong types, 100 MB bodies, 10 M token ids, slow clients)",
                    threads + " fuzz connections + 1 normal client",
                    total + 20,
                    -1,
                    -1,
                    -1,
                    -1,
                    0,
                    -1,
                    "no 5xx; statuses " + new java.util.TreeMap<>(statuses) + "; 100 MB -> " + huge.status()
                            + ", 10 M tokens -> " + tenMillionTokens.status() + ", slow clients -> "
                            + slow.status() + "; " + normalOk.get() + " normal /query+/health all answered"));
        }
    }

    /**
     * Requests the server refuses before any route sees them (Helidon parses the request line and headers): a 400
     * whose JSON error gives the reason, as the routes' refusals do.
     */
    @Test
    void requestsTheServerCannotParseGetAJsonError(WebServer server) throws Exception {
        Map<String, String> malformed = Map.of(
                "GET /workers?model_name=%zz HTTP/1.1\r\nHost: x\r\n\r\n", "% encoding",
                "GET /health HTTP/1.1\r\n\r\n", "Host header",
                "POST /query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: abc\r\n\r\n{}",
                        "Content length",
                "GET /wor kers HTTP/1.1\r\nHost: x\r\n\r\n", "Bad request");
        for (var request : malformed.entrySet()) {
            Reply r = raw(server.port(), request.getKey());
            assertThat(r.status()).as(request.getKey()).isEqualTo(400);
            JsonNode json = HttpTestClient.JSON.readTree(r.body());
            assertThat(json.path("error").asText()).as(request.getKey()).contains(request.getValue());
        }
        // Helidon 4 speaks HTTP/1.1 only: an HTTP/1.0 client (nginx's proxy_pass by default) gets a 505 that says so
        // (compatibility.md, HTTP API; operations.md, Troubleshooting)
        Reply old = raw(server.port(), "GET /health HTTP/1.0\r\n\r\n");
        assertThat(old.status()).isEqualTo(505);
        assertThat(HttpTestClient.JSON.readTree(old.body()).path("error").asText())
                .contains("HTTP 1.0 is not supported");
    }

    private static Reply raw(int port, String request) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
            s.setSoTimeout(60_000);
            s.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
            s.getOutputStream().flush();
            return read(s.getInputStream());
        }
    }

    private static void check(Reply r, String path, byte[] body, ConcurrentLinkedQueue<String> failures) {
        if (r.status() >= 500) {
            failures.add(path + " -> " + r.status() + " " + r.body() + " for " + preview(body));
            return;
        }
        if (r.status() >= 400) {
            try {
                JsonNode json = HttpTestClient.JSON.readTree(r.body());
                if (!json.path("error").isTextual()
                        || json.path("error").asText().isBlank()) {
                    failures.add(path + " -> " + r.status() + " without a JSON error: " + r.body());
                }
            } catch (IOException e) {
                failures.add(path + " -> " + r.status() + " non-JSON body: " + r.body());
            }
        }
    }

    private static String preview(byte[] body) {
        String s = new String(body, StandardCharsets.UTF_8);
        return s.length() > 200 ? s.substring(0, 200) + "..." : s;
    }

    static byte[] hostileBody(Random random) {
        String[] valid = {
            "{\"instance_id\":7,\"endpoint\":\"tcp://127.0.0.1:9\",\"model_name\":\"m\",\"block_size\":4}",
            "{\"model_name\":\"m\",\"token_ids\":[1,2,3,4,5,6,7,8]}",
            "{\"model_name\":\"m\",\"block_hashes\":[1,2,3]}",
            "{\"instance_id\":7}",
            "{\"url\":\"http://127.0.0.1:1\"}"
        };
        String base = valid[random.nextInt(valid.length)];
        String s = switch (random.nextInt(12)) {
            case 0 -> base.substring(0, random.nextInt(base.length())); // truncated
            case 1 -> "[".repeat(100_000) + "]".repeat(random.nextInt(2) * 100_000); // deep nesting
            case 2 -> "{\"a\":" + "{\"a\":".repeat(5_000) + "1" + "}".repeat(5_001);
            case 3 -> base.replaceFirst("\\d+", "9".repeat(1 + random.nextInt(5_000))); // huge number
            case 4 -> base.replaceFirst("\\d+", random.nextBoolean() ? "1e999999" : "-0.5");
            case 5 ->
                base.replaceFirst(
                        ":\\[[^]]*]|:\\d+|:\"[^\"]*\"",
                        java.util.regex.Matcher.quoteReplacement(":" + wrongType(random)));
            case 6 -> base.replace("}", ",\"" + "x".repeat(random.nextInt(100)) + "\":" + wrongType(random) + "}");
            case 7 -> {
                byte[] b = new byte[random.nextInt(512)];
                random.nextBytes(b);
                yield new String(b, StandardCharsets.ISO_8859_1);
            }
            case 8 -> base + base; // trailing garbage
            case 9 -> base.replace("\"", random.nextBoolean() ? "'" : ""); // not JSON quotes
            case 10 ->
                "{\"model_name\":\"" + "\\ud800".repeat(random.nextInt(10)) + "\",\"token_ids\":[-1,4294967296]}";
            default -> "";
        };
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String wrongType(Random random) {
        String[] v = {
            "null",
            "true",
            "\"x\"",
            "{}",
            "[]",
            "[1.5]",
            "[-1]",
            "[18446744073709551616]",
            "1.0e3",
            "[[1]]",
            "[null]",
            "\"\"",
            "-9223372036854775809",
            "{\"$ref\":1}"
        };
        return v[random.nextInt(v.length)];
    }

    static Reply request(int port, String method, String path, String contentType, byte[] body) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
            s.setSoTimeout(60_000);
            OutputStream out = s.getOutputStream();
            out.write((method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: "
                            + contentType + "\r\nContent-Length: " + body.length + "\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1));
            try {
                out.write(body);
                out.flush();
            } catch (IOException answeredEarly) {
                // the server may answer (and close) before reading a body it already rejected
            }
            return read(s.getInputStream());
        }
    }

    /** Reads one response: head, then Content-Length bytes (or up to EOF when there is none). */
    private static Reply read(InputStream raw) throws IOException {
        InputStream in = new java.io.BufferedInputStream(raw);
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        int headEnd = -1;
        long need = Long.MAX_VALUE;
        try {
            int b;
            while (buf.size() < (headEnd < 0 ? 1 << 20 : headEnd + Math.min(need, 1 << 20)) && (b = in.read()) >= 0) {
                buf.write(b);
                if (headEnd < 0
                        && buf.size() >= 4
                        && buf.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
                    headEnd = buf.size();
                    String head = buf.toString(StandardCharsets.ISO_8859_1).toLowerCase(java.util.Locale.ROOT);
                    int at = head.indexOf("\r\ncontent-length:");
                    if (at >= 0) {
                        int end = head.indexOf("\r\n", at + 2);
                        need = Long.parseLong(head.substring(at + 17, end).strip());
                    }
                }
            }
        } catch (java.net.SocketException reset) {
            // the server may close after answering an oversized request; keep what arrived
        }
        String text = buf.toString(StandardCharsets.ISO_8859_1);
        if (!text.startsWith("HTTP/1.1 ")) {
            throw new IOException("no HTTP response: " + text);
        }
        int status = Integer.parseInt(text.substring(9, 12));
        int split = text.indexOf("\r\n\r\n");
        return new Reply(status, split < 0 ? "" : text.substring(split + 4));
    }

    /** A body of {@code size} bytes written 64 KiB at a time, with Content-Length or chunked. */
    static Reply streamed(int port, String path, long size, boolean chunked) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
            s.setSoTimeout(60_000);
            OutputStream out = s.getOutputStream();
            out.write(
                    ("POST " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n"
                                    + (chunked ? "Transfer-Encoding: chunked\r\n" : "Content-Length: " + size + "\r\n")
                                    + "\r\n")
                            .getBytes(StandardCharsets.ISO_8859_1));
            byte[] piece = new byte[64 * 1024];
            java.util.Arrays.fill(piece, (byte) ' ');
            piece[0] = '{';
            try {
                for (long sent = 0; sent < size; sent += piece.length) {
                    if (chunked) {
                        out.write((Integer.toHexString(piece.length) + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
                    }
                    out.write(piece);
                    if (chunked) {
                        out.write("\r\n".getBytes(StandardCharsets.ISO_8859_1));
                    }
                    piece[0] = ' ';
                }
                if (chunked) {
                    out.write("0\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
                }
                out.flush();
            } catch (IOException closedByServer) {
                // expected: the server answered 413 and closed before we finished
            }
            return read(s.getInputStream());
        }
    }

    /** A /query with {@code n} token ids, generated while it is written (Content-Length known up front). */
    static Reply tokens(int port, int n) throws IOException {
        byte[] head = "{\"model_name\":\"m\",\"token_ids\":[".getBytes(StandardCharsets.US_ASCII);
        long size = head.length + 2L * n - 1 + 2;
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
            s.setSoTimeout(60_000);
            OutputStream out = s.getOutputStream();
            out.write(("POST /query HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n"
                            + "Content-Length: " + size + "\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1));
            try {
                out.write(head);
                byte[] block = "1,".repeat(32 * 1024).getBytes(StandardCharsets.US_ASCII);
                for (int written = 0; written < n - 1; written += 32 * 1024) {
                    out.write(block, 0, 2 * Math.min(32 * 1024, n - 1 - written));
                }
                out.write("1]}".getBytes(StandardCharsets.US_ASCII));
                out.flush();
            } catch (IOException closedByServer) {
                // expected: answered before the body ended
            }
            return read(s.getInputStream());
        }
    }

    /**
     * Clients that send a request line and then dribble a valid-looking body one byte every 20 ms for a bounded
     * time, then stop sending; the normal checker runs throughout. Returns the last client's answer.
     */
    static Reply slowClients(int port, int clients, ConcurrentLinkedQueue<String> failures) throws Exception {
        List<Socket> sockets = new ArrayList<>();
        try {
            for (int i = 0; i < clients; i++) {
                Socket s = new Socket();
                s.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
                s.setSoTimeout(120_000);
                s.getOutputStream()
                        .write(("POST /query HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                                        + "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
                                .getBytes(StandardCharsets.ISO_8859_1));
                sockets.add(s);
            }
            byte[] dribble = "{\"model_name\":\"m\",\"token_ids\":[1,2,3".getBytes(StandardCharsets.US_ASCII);
            for (byte b : dribble) {
                for (Socket s : sockets) {
                    s.getOutputStream().write(b);
                    s.getOutputStream().flush();
                }
                LockSupport.parkNanos(20_000_000L);
            }
            // half-close: the declared 1000 bytes never come; the server must answer, not hang
            Reply last = null;
            for (Socket s : sockets) {
                s.shutdownOutput();
                last = read(s.getInputStream());
                if (last.status() >= 500) {
                    failures.add("slow client -> " + last.status() + " " + last.body());
                }
            }
            return last;
        } finally {
            for (Socket s : sockets) {
                s.close();
            }
        }
    }
}

package io.kvindexer.indexer.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.ConfigException;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerCli;
import io.kvindexer.indexer.recovery.PeerRecovery;
import io.kvindexer.indexer.reliability.FaultHarnessAccess;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.indexer.testkit.LogCapture;
import io.kvindexer.indexer.testkit.SecuredIndexer;
import io.kvindexer.tls.CaTrust;
import io.kvindexer.tls.Certificates;
import io.kvindexer.tls.PemFormat;
import java.io.IOException;
import java.math.BigInteger;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** HTTPS on --port with a test CA: served, refused to plain HTTP, trusted by peers by --tls-ca-file, reloaded. */
class TlsTest {

    private static final String TOKEN = "tls-test-token";

    @TempDir
    Path dir;

    private TestCa ca;
    private Path cert;
    private Path key;
    private Path caFile;

    @BeforeEach
    void certificates() throws Exception {
        ca = TestCa.create("kv-indexer test CA");
        cert = dir.resolve("tls.crt");
        key = dir.resolve("tls.key");
        ca.issue("replica").write(cert, key);
        caFile = ca.writeCert(dir.resolve("ca.crt"));
    }

    private IndexerApp start(String... extra) throws ConfigException {
        return SecuredIndexer.start(
                List.of("--tls-cert-file", cert.toString(), "--tls-key-file", key.toString()), extra);
    }

    private static HttpResponse<String> get(SSLContext tls, String url, String token)
            throws IOException, InterruptedException {
        try (HttpClient client = HttpClient.newBuilder()
                .sslContext(tls)
                .connectTimeout(Duration.ofSeconds(5))
                .build()) {
            HttpRequest.Builder r = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10));
            if (token != null) {
                r.header("Authorization", "Bearer " + token);
            }
            return client.send(r.build(), HttpResponse.BodyHandlers.ofString());
        }
    }

    @Test
    void servesHttpsAndRefusesPlainHttp() throws Exception {
        try (IndexerApp app = start()) {
            assertThat(app.baseUrl()).startsWith("https://127.0.0.1:");
            assertThat(get(ca.clientContext(), app.baseUrl() + "/health", null).statusCode())
                    .isEqualTo(200);
            String plain = app.baseUrl().replaceFirst("^https:", "http:") + "/health";
            assertThatThrownBy(() -> get(SSLContext.getDefault(), plain, null)).isInstanceOf(IOException.class);
            // a client that trusts another CA does not get through either
            TestCa other = TestCa.create("another CA");
            assertThatThrownBy(() -> get(other.clientContext(), app.baseUrl() + "/health", null))
                    .isInstanceOf(IOException.class);
        }
    }

    @Test
    void certificateReplacedOnDiskIsServedToTheNextConnection() throws Exception {
        try (IndexerApp app = start()) {
            BigInteger first = servedSerial(app.port());
            X509Certificate renewed = ca.issue("replica-renewed").cert();
            TestCa.Issued next = ca.issue("replica-renewed");
            next.write(cert, key);
            await().atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> servedSerial(app.port()).equals(next.cert().getSerialNumber()));
            assertThat(next.cert().getSerialNumber()).isNotEqualTo(first).isNotEqualTo(renewed.getSerialNumber());
            // a broken pair on disk (a key that is not the certificate's) keeps the good one in service
            ca.issue("mismatch").write(dir.resolve("other.crt"), key);
            Thread.sleep(500);
            assertThat(servedSerial(app.port())).isEqualTo(next.cert().getSerialNumber());
            assertThat(get(ca.clientContext(), app.baseUrl() + "/health", null).statusCode())
                    .isEqualTo(200);
        }
    }

    /**
     * An expired or not yet valid certificate is served (renewing it is the user's), but every client refuses it:
     * the log names the file and the date, at start and at each reload; a good one again brings no warning.
     */
    @Test
    void aCertificateOutsideItsValidityIsServedWithAWarning() throws Exception {
        Instant now = Instant.now();
        TestCa.Issued expired = ca.issue("replica-expired", now.minus(Duration.ofDays(2)), Duration.ofHours(1));
        expired.write(cert, key);
        Instant expiredOn = expired.cert().getNotAfter().toInstant();
        assertThat(expiredOn).isBefore(now);
        try (LogCapture log = LogCapture.warningsOf("io.kvindexer.indexer.SecurityReloads");
                IndexerApp app = start("--tls-ca-file", caFile.toString())) {
            assertThat(log.warnings())
                    .containsExactly("the TLS certificate in " + cert + " expired on " + expiredOn
                            + " (notAfter): clients refuse the handshake until it is renewed");
            assertThat(servedSerial(app.port(), trustingAnyDate()))
                    .isEqualTo(expired.cert().getSerialNumber());

            TestCa.Issued early = ca.issue("replica-early", now.plus(Duration.ofDays(2)), Duration.ofDays(30));
            early.write(cert, key);
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> validityWarnings(log).size() == 2);
            assertThat(validityWarnings(log).get(1))
                    .isEqualTo("the TLS certificate in " + cert + " is not valid before "
                            + early.cert().getNotBefore().toInstant() + " (notBefore; notAfter "
                            + early.cert().getNotAfter().toInstant()
                            + "): clients refuse the handshake until it is renewed");

            TestCa.Issued good = ca.issue("replica-renewed");
            good.write(cert, key);
            await().atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> servedSerial(app.port(), trustingAnyDate())
                            .equals(good.cert().getSerialNumber()));
            assertThat(servedSerial(app.port())).isEqualTo(good.cert().getSerialNumber());
            assertThat(validityWarnings(log)).hasSize(2);
        }
    }

    /**
     * The warnings but those of a reload that read the new certificate with the old key (the files are written one
     * after the other, and a reload between them keeps the served pair, saying so).
     */
    private static List<String> validityWarnings(LogCapture log) {
        return log.warnings().stream()
                .filter(w -> !w.startsWith("TLS files changed but are not usable yet"))
                .toList();
    }

    /**
     * A certificate issued by an intermediate CA and served without it is served, but a client that trusts only the
     * root refuses the handshake: the log names the file and the missing issuer, at start; with the intermediate
     * appended to the file the same client gets through, and nothing more is logged. A leaf of a root that
     * {@code --tls-ca-file} holds (as the operator's, and the other tests') draws no warning.
     */
    @Test
    void aCertificateWithoutItsIntermediateIsServedWithAWarning() throws Exception {
        Instant now = Instant.now();
        KeyPair rootKeys = Certificates.ecKeys();
        X500Name rootName = new X500Name("CN=kv-indexer test root");
        X509Certificate root = issueCa(rootName, rootKeys, rootName, rootKeys, 1, now);
        KeyPair intermediateKeys = Certificates.ecKeys();
        X500Name intermediateName = new X500Name("CN=kv-indexer test intermediate");
        X509Certificate intermediate = issueCa(intermediateName, intermediateKeys, rootName, rootKeys, 0, now);
        KeyPair leafKeys = Certificates.ecKeys();
        X509Certificate leaf = Certificates.sign(
                Certificates.builder(
                        new X500Name("CN=replica"), intermediateName, leafKeys.getPublic(), now, Duration.ofHours(1)),
                intermediateKeys.getPrivate());
        new TestCa.Issued(leaf, leafKeys).write(cert, key);
        Path rootFile = dir.resolve("root.crt");
        Files.writeString(rootFile, PemFormat.certificate(root));
        javax.net.ssl.SSLSocketFactory rootOnly;
        try (java.io.InputStream in = Files.newInputStream(rootFile)) {
            rootOnly = CaTrust.sslContext(in).getSocketFactory();
        }

        try (LogCapture log = LogCapture.warningsOf("io.kvindexer.indexer.SecurityReloads");
                IndexerApp app = start("--tls-ca-file", rootFile.toString())) {
            assertThat(log.warnings())
                    .containsExactly("the TLS certificate in " + cert + " is issued by CN=kv-indexer test intermediate,"
                            + " whose certificate is neither in the file nor a root this replica knows (--tls-ca-file,"
                            + " the JDK's trusted roots): if CN=kv-indexer test intermediate is an intermediate CA,"
                            + " append its certificate to " + cert + " after this one, or clients that trust only the"
                            + " root refuse the handshake; if it is a root your clients trust, give it as"
                            + " --tls-ca-file");
            assertThatThrownBy(() -> servedSerial(app.port(), rootOnly))
                    .as("what the warning says")
                    .isInstanceOf(javax.net.ssl.SSLHandshakeException.class);

            TestCa.writeAtomically(cert, PemFormat.certificate(leaf) + PemFormat.certificate(intermediate));
            await().atMost(Duration.ofSeconds(30))
                    .ignoreExceptions()
                    .until(() -> servedSerial(app.port(), rootOnly).equals(leaf.getSerialNumber()));
            assertThat(log.warnings()).hasSize(1);
        }
    }

    private static X509Certificate issueCa(
            X500Name subject, KeyPair keys, X500Name issuer, KeyPair issuerKeys, int pathLength, Instant now)
            throws Exception {
        X509v3CertificateBuilder b = Certificates.builder(subject, issuer, keys.getPublic(), now, Duration.ofDays(1));
        b.addExtension(Extension.basicConstraints, true, new BasicConstraints(pathLength));
        b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
        return Certificates.sign(b, issuerKeys.getPrivate());
    }

    /** A client context that trusts the test CA's certificates whatever their dates, to see what is served. */
    private javax.net.ssl.SSLSocketFactory trustingAnyDate() throws Exception {
        javax.net.ssl.X509TrustManager any = new javax.net.ssl.X509TrustManager() {
            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType) {}

            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType) {}

            @Override
            public X509Certificate[] getAcceptedIssuers() {
                return new X509Certificate[0];
            }
        };
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, new javax.net.ssl.TrustManager[] {any}, null);
        return ctx.getSocketFactory();
    }

    /** The serial number of the certificate a fresh TLS connection is served. */
    private BigInteger servedSerial(int port) throws Exception {
        return servedSerial(port, ca.clientContext().getSocketFactory());
    }

    private static BigInteger servedSerial(int port, javax.net.ssl.SSLSocketFactory factory) throws Exception {
        try (SSLSocket s = (SSLSocket) factory.createSocket("127.0.0.1", port)) {
            s.setSoTimeout(5000);
            s.startHandshake();
            return ((X509Certificate) s.getSession().getPeerCertificates()[0]).getSerialNumber();
        }
    }

    /**
     * A TLS connection's handshake, up to its first request's bytes, is bounded by {@code --request-read-timeout-ms},
     * as a request's head is: Helidon runs it with no time limit inside the connection's first read, where the
     * head's clock does not see it, so a client that sent part of a ClientHello, or nothing, held its socket and a
     * thread until Helidon's idle check, over 6 minutes. A connection idle between requests is not timed.
     */
    @Test
    void aStalledHandshakeIsClosedAfterTheReadTimeout() throws Exception {
        try (IndexerApp app = start("--request-read-timeout-ms", "1000")) {
            int port = java.net.URI.create(app.baseUrl()).getPort();
            // a TLS record header announcing a ClientHello of 512 bytes, and one of them
            byte[] partialHello = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01};
            for (byte[] sent : List.of(partialHello, new byte[0])) {
                try (java.net.Socket stalled = new java.net.Socket("127.0.0.1", port)) {
                    stalled.getOutputStream().write(sent);
                    stalled.setSoTimeout(20_000);
                    long start = System.nanoTime();
                    // the server closes it: end of stream, or a reset
                    assertThat(readUntilClosed(stalled))
                            .as("%d bytes sent", sent.length)
                            .isTrue();
                    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(15));
                }
            }
            // the first request's bytes let the deadline go: an idle keep-alive connection is not timed
            try (SSLSocket kept =
                    (SSLSocket) ca.clientContext().getSocketFactory().createSocket("127.0.0.1", port)) {
                kept.setSoTimeout(20_000);
                assertThat(exchange(kept, "")).startsWith("HTTP/1.1 200");
                Thread.sleep(1500); // past the deadline the connection had before its first request
                assertThat(exchange(kept, "Connection: close\r\n")).startsWith("HTTP/1.1 200");
            }
        }
    }

    /** GET /health on {@code socket}; the answer's head (its body is empty). */
    private static String exchange(SSLSocket socket, String headers) throws IOException {
        socket.getOutputStream()
                .write(("GET /health HTTP/1.1\r\nHost: x\r\n" + headers + "\r\n")
                        .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        StringBuilder head = new StringBuilder();
        while (head.indexOf("\r\n\r\n") < 0) {
            int b = socket.getInputStream().read();
            if (b < 0) {
                break;
            }
            head.append((char) b);
        }
        return head.toString();
    }

    /** True once the peer closed the socket (end of stream or a reset); false if the read timed out first. */
    private static boolean readUntilClosed(java.net.Socket socket) throws IOException {
        try {
            while (socket.getInputStream().read(new byte[256]) >= 0) {
                // a TLS alert, if any: read on to the end
            }
            return true;
        } catch (java.net.SocketTimeoutException e) {
            return false;
        } catch (java.net.SocketException e) {
            return true; // reset
        }
    }

    /**
     * An http:// peer URL of a replica that serves HTTPS: the peer answers with a TLS alert, which the HTTP client
     * quoted byte for byte in the log; the failure now says what to change.
     */
    @Test
    void anHttpUrlOfAnHttpsPeerSaysToUseHttps() throws Exception {
        try (IndexerApp tlsPeer = start();
                LogCapture log = LogCapture.warningsOf(PeerRecovery.class)) {
            String plainUrl = tlsPeer.baseUrl().replaceFirst("^https:", "http:");
            try (IndexerApp replica = IndexerApp.start("--host", "127.0.0.1", "--port", "0", "--peers", plainUrl)) {
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> log.warnings().stream().anyMatch(w -> w.startsWith("P2P recovery from")));
                assertThat(replica.config().peers()).containsExactly(plainUrl);
            }
            assertThat(log.warnings())
                    .contains("P2P recovery from " + plainUrl + " failed: the peer speaks TLS, use https:// in its URL"
                            + " (and --tls-ca-file names the CA that issued its certificate)")
                    .allSatisfy(w -> assertThat(w).doesNotContainPattern("\\p{Cntrl}"));
        }
    }

    @Test
    void peerRecoveryOverHttpsTrustsTheCaFileOnly() throws Exception {
        Path tokenFile = Files.writeString(dir.resolve("token"), TOKEN);
        try (EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults());
                IndexerApp first = start("--auth-token-file", tokenFile.toString())) {
            HttpResponse<String> registered = post(
                    ca.clientContext(),
                    first.baseUrl() + "/register",
                    "{\"instance_id\":1,\"endpoint\":\"" + sim.endpoint()
                            + "\",\"model_name\":\"m\",\"block_size\":4}");
            assertThat(registered.statusCode()).isEqualTo(201);
            await().atMost(Duration.ofSeconds(30)).until(() -> sim.subscriptions() >= 1);
            sim.storeSequence(new int[] {1, 2, 3, 4, 5, 6, 7, 8}, 4).get(30, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> get(ca.clientContext(), first.baseUrl() + "/dump", TOKEN)
                            .body()
                            .contains("block_hash"));
            String dump =
                    get(ca.clientContext(), first.baseUrl() + "/dump", TOKEN).body();

            Path wrongCa = TestCa.create("wrong CA").writeCert(dir.resolve("wrong-ca.crt"));
            try (IndexerApp trusting = start(
                            "--peers",
                            first.baseUrl(),
                            "--tls-ca-file",
                            caFile.toString(),
                            "--auth-token-file",
                            tokenFile.toString());
                    IndexerApp distrusting = start(
                            "--peers",
                            first.baseUrl(),
                            "--tls-ca-file",
                            wrongCa.toString(),
                            "--auth-token-file",
                            tokenFile.toString())) {
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> get(ca.clientContext(), trusting.baseUrl() + "/ready", null)
                                                .statusCode()
                                        == 200
                                && get(ca.clientContext(), distrusting.baseUrl() + "/ready", null)
                                                .statusCode()
                                        == 200);
                assertThat(FaultHarnessAccess.canonical(get(ca.clientContext(), trusting.baseUrl() + "/dump", TOKEN)
                                .body()))
                        .isEqualTo(FaultHarnessAccess.canonical(dump));
                // the handshake with the peer failed: nothing recovered, the replica starts empty
                assertThat(get(ca.clientContext(), distrusting.baseUrl() + "/dump", TOKEN)
                                .body())
                        .isEqualTo("{}");
            }
        }
    }

    private static HttpResponse<String> post(SSLContext tls, String url, String json) throws Exception {
        try (HttpClient client = HttpClient.newBuilder().sslContext(tls).build()) {
            return client.send(
                    HttpRequest.newBuilder(URI.create(url))
                            .header("Authorization", "Bearer " + TOKEN)
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(json))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
        }
    }

    @Test
    void badTlsFlagsAreStartupErrors() throws Exception {
        assertThatThrownBy(() -> IndexerCli.parse(new String[] {"--tls-cert-file", cert.toString()}, Map.of()))
                .hasMessageContaining("--tls-key-file");
        Path otherKey = dir.resolve("other.key");
        ca.issue("other").write(dir.resolve("other.crt"), otherKey);
        assertThatThrownBy(() -> IndexerCli.parse(
                        new String[] {"--tls-cert-file", cert.toString(), "--tls-key-file", otherKey.toString()},
                        Map.of()))
                .hasMessageContaining("does not belong");
        assertThatThrownBy(() -> IndexerCli.parse(
                        new String[] {
                            "--tls-ca-file", dir.resolve("missing.crt").toString()
                        },
                        Map.of()))
                .hasMessage("invalid value for --tls-ca-file: cannot read " + dir.resolve("missing.crt")
                        + ": no such file or directory");
    }
}

package io.kvindexer.indexer.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerCli;
import io.kvindexer.indexer.reliability.FaultHarnessAccess;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.indexer.testkit.SecuredIndexer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * While a change of TLS or of the token rolls through the replicas, a restarted replica serves otherwise than the
 * peers not restarted yet, and must still recover their index: found by {@code --peers-dns} (here an address literal,
 * which resolves to itself), asked in both schemes ({@code --peers-dns-schemes}), trusted by {@code --tls-ca-file}
 * without serving TLS itself, sent their token by {@code --peer-auth-token-file}, which it does not ask of its own
 * callers. Real servers on loopback, a real engine simulator.
 */
class RollingSecurityRecoveryTest {

    private static final String TOKEN = "rolling-token";

    @TempDir
    Path dir;

    private TestCa ca;
    private List<String> tlsFlags;
    private Path caFile;
    private Path tokenFile;

    @BeforeEach
    void files() throws Exception {
        ca = TestCa.create("kv-indexer rollout CA");
        Path cert = dir.resolve("tls.crt");
        Path key = dir.resolve("tls.key");
        ca.issue("replica").write(cert, key);
        tlsFlags = List.of("--tls-cert-file", cert.toString(), "--tls-key-file", key.toString());
        caFile = ca.writeCert(dir.resolve("ca.crt"));
        tokenFile = Files.writeString(dir.resolve("token"), TOKEN + "\n");
    }

    /** TLS turned on: the restarted replica serves HTTPS, its peer still plain HTTP. */
    @Test
    void aReplicaTurnedToTlsRecoversFromAPlainPeer() throws Exception {
        try (EngineSimulator engine = EngineSimulator.start(EngineSimulator.Options.defaults());
                IndexerApp peer = IndexerApp.start("--host", "127.0.0.1", "--port", "0")) {
            String dump = seed(peer.baseUrl(), null, engine);
            try (IndexerApp replica = SecuredIndexer.start(
                    tlsFlags, "--peers-dns", "127.0.0.1:" + peer.port(), "--peers-dns-schemes", "https,http")) {
                assertThat(replica.baseUrl()).startsWith("https:");
                assertThat(dumpOnceReady(replica.baseUrl(), null)).isEqualTo(dump);
            }
        }
    }

    /** Without {@code --peers-dns-schemes}, a {@code --peers-dns} address is asked in the replica's own scheme only. */
    @Test
    void byDefaultAnAddressIsAskedInTheSchemeTheReplicaServes() throws Exception {
        try (EngineSimulator engine = EngineSimulator.start(EngineSimulator.Options.defaults());
                IndexerApp peer = IndexerApp.start("--host", "127.0.0.1", "--port", "0")) {
            seed(peer.baseUrl(), null, engine);
            try (IndexerApp replica = SecuredIndexer.start(tlsFlags, "--peers-dns", "127.0.0.1:" + peer.port())) {
                assertThat(dumpOnceReady(replica.baseUrl(), null)).isEmpty();
            }
        }
    }

    /** TLS turned off: the restarted replica serves plain HTTP, its peer HTTPS with a certificate of {@code ca}. */
    @Test
    void aReplicaTurnedToPlainRecoversFromATlsPeerByTheCaFile() throws Exception {
        try (EngineSimulator engine = EngineSimulator.start(EngineSimulator.Options.defaults());
                IndexerApp peer = SecuredIndexer.start(tlsFlags)) {
            String dump = seed(peer.baseUrl(), null, engine);
            try (IndexerApp replica = IndexerApp.start(
                    "--host",
                    "127.0.0.1",
                    "--port",
                    "0",
                    "--peers-dns",
                    "127.0.0.1:" + peer.port(),
                    "--peers-dns-schemes",
                    "http,https",
                    "--tls-ca-file",
                    caFile.toString())) {
                assertThat(replica.baseUrl()).startsWith("http:");
                assertThat(dumpOnceReady(replica.baseUrl(), null)).isEqualTo(dump);
            }
        }
    }

    /** The token turned off: the restarted replica requires none, its peer still does. */
    @Test
    void aReplicaWithoutATokenRecoversFromAPeerRequiringOneAndAsksNoneOfItsCallers() throws Exception {
        try (EngineSimulator engine = EngineSimulator.start(EngineSimulator.Options.defaults());
                IndexerApp peer = IndexerApp.start(
                        "--host", "127.0.0.1", "--port", "0", "--auth-token-file", tokenFile.toString())) {
            String dump = seed(peer.baseUrl(), TOKEN, engine);
            try (IndexerApp replica = IndexerApp.start(
                    "--host",
                    "127.0.0.1",
                    "--port",
                    "0",
                    "--peers-dns",
                    "127.0.0.1:" + peer.port(),
                    "--peer-auth-token-file",
                    tokenFile.toString())) {
                // no token sent: the replica's own /dump is open
                assertThat(dumpOnceReady(replica.baseUrl(), null)).isEqualTo(dump);
                assertThat(get(replica.baseUrl() + "/dump", null).statusCode()).isEqualTo(200);
            }
        }
    }

    /** The token turned on: the restarted replica sends its token to a peer that asks none, which ignores it. */
    @Test
    void aReplicaWithATokenRecoversFromAnOpenPeer() throws Exception {
        try (EngineSimulator engine = EngineSimulator.start(EngineSimulator.Options.defaults());
                IndexerApp peer = IndexerApp.start("--host", "127.0.0.1", "--port", "0")) {
            String dump = seed(peer.baseUrl(), null, engine);
            try (IndexerApp replica = IndexerApp.start(
                    "--host",
                    "127.0.0.1",
                    "--port",
                    "0",
                    "--peers-dns",
                    "127.0.0.1:" + peer.port(),
                    "--auth-token-file",
                    tokenFile.toString())) {
                assertThat(dumpOnceReady(replica.baseUrl(), TOKEN)).isEqualTo(dump);
            }
        }
    }

    @Test
    void badPeerFlagsAreStartupErrors() {
        assertThatThrownBy(() -> IndexerCli.parse(new String[] {"--peers-dns-schemes", "https,http"}, Map.of()))
                .hasMessage("--peers-dns is required when --peers-dns-schemes is specified");
        for (String bad : List.of("ftp", "https,https", "https,", "http;https")) {
            assertThatThrownBy(() -> IndexerCli.parse(
                            new String[] {"--peers-dns", "peers:8090", "--peers-dns-schemes", bad}, Map.of()))
                    .hasMessage("invalid value for --peers-dns-schemes: `" + bad
                            + "` (expected http, https, or both comma-separated, each once)");
        }
        Path missing = dir.resolve("missing-token");
        assertThatThrownBy(
                        () -> IndexerCli.parse(new String[] {"--peer-auth-token-file", missing.toString()}, Map.of()))
                .hasMessageStartingWith("invalid value for --peer-auth-token-file: ");
    }

    /**
     * Registers {@code engine} on the replica at {@code base} (sending {@code token}, if any), stores two blocks and
     * returns the replica's dump once it holds them, in canonical form.
     */
    private String seed(String base, String token, EngineSimulator engine) throws Exception {
        HttpResponse<String> registered = send(
                HttpRequest.newBuilder(URI.create(base + "/register"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"instance_id\":1,\"endpoint\":\""
                                + engine.endpoint() + "\",\"model_name\":\"m\",\"block_size\":4}")),
                token);
        assertThat(registered.statusCode()).isEqualTo(201);
        await().atMost(Duration.ofSeconds(30)).until(() -> engine.subscriptions() >= 1);
        engine.storeSequence(new int[] {1, 2, 3, 4, 5, 6, 7, 8}, 4).get(30, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(30))
                .until(() -> get(base + "/dump", token).body().contains("block_hash"));
        String dump = String.join(
                "\n", FaultHarnessAccess.canonical(get(base + "/dump", token).body()));
        assertThat(dump).isNotEmpty();
        return dump;
    }

    /** The replica's dump in canonical form once {@code /ready} answers 200 (its recovery is over). */
    private String dumpOnceReady(String base, String token) throws Exception {
        await().atMost(Duration.ofSeconds(60))
                .ignoreExceptions()
                .until(() -> get(base + "/ready", null).statusCode() == 200);
        HttpResponse<String> dump = get(base + "/dump", token);
        assertThat(dump.statusCode()).isEqualTo(200);
        return String.join("\n", FaultHarnessAccess.canonical(dump.body()));
    }

    private HttpResponse<String> get(String url, String token) throws Exception {
        return send(HttpRequest.newBuilder(URI.create(url)).GET(), token);
    }

    /** Over HTTPS trusting {@link #ca}, or plain HTTP, as the URL says. */
    private HttpResponse<String> send(HttpRequest.Builder request, String token) throws Exception {
        SSLContext tls = ca.clientContext();
        try (HttpClient client = HttpClient.newBuilder()
                .sslContext(tls)
                .connectTimeout(Duration.ofSeconds(5))
                .build()) {
            if (token != null) {
                request.header("Authorization", "Bearer " + token);
            }
            return client.send(request.timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        }
    }
}

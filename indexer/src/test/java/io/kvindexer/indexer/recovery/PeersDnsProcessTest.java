package io.kvindexer.indexer.recovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.IndexerProcess;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code --peers-dns} with real indexer processes: a hosts file (the JDK's {@code jdk.net.hosts.file}) makes one
 * name resolve to 127.0.0.2, .3 and .4, as a headless Service resolves to its Ready replicas; each replica listens
 * on its own address with the same port, skips itself and recovers from the first address that answers.
 */
class PeersDnsProcessTest {

    private static final String NAME = "kv-indexer-peers.test";

    @Test
    void replicasFindEachOtherThroughOneName() throws Exception {
        int port = portFreeOnAll("127.0.0.2", "127.0.0.3", "127.0.0.4");
        Path hosts = Path.of("target", "peers-dns-" + port + ".hosts");
        Files.createDirectories(hosts.getParent());
        Files.writeString(hosts, "127.0.0.2 " + NAME + "\n127.0.0.3 " + NAME + "\n127.0.0.4 " + NAME + "\n");
        List<String> jvm = new ArrayList<>(IndexerProcess.QUICK_START);
        jvm.add("-Djdk.net.hosts.file=" + hosts.toAbsolutePath());
        String target = NAME + ":" + port;
        List<IndexerProcess> replicas = new ArrayList<>();
        try (EngineSimulator engine = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            // the first replica: the name lists itself and two addresses where nothing answers: it starts empty
            IndexerProcess first =
                    IndexerProcess.start(jvm, "--host", "127.0.0.2", "--port", "" + port, "--peers-dns", target);
            replicas.add(first);
            assertThat(first.url()).isEqualTo("http://127.0.0.2:" + port);
            HttpTestClient a = new HttpTestClient(first.url());
            await().atMost(Duration.ofSeconds(60)).until(() -> a.get("/ready").status() == 200);
            assertThat(first.output())
                    .contains("P2P recovery: no reachable peers")
                    .doesNotContain("recovery from http://127.0.0.2:" + port);
            Replicas.seed(a, engine);

            // the second: skips itself (127.0.0.3), recovers from 127.0.0.2 with the peer's registrations (issue 20)
            IndexerProcess second =
                    IndexerProcess.start(jvm, "--host", "127.0.0.3", "--port", "" + port, "--peers-dns", target);
            replicas.add(second);
            HttpTestClient b = new HttpTestClient(second.url());
            // ready means recovered: the first 200 already answers from the peer's index
            await().atMost(Duration.ofSeconds(60)).until(() -> b.get("/ready").status() == 200);
            assertThat(second.output()).contains("P2P recovery completed from http://127.0.0.2:" + port);
            assertThat(Replicas.score(b)).isEqualTo(8);
            assertThat(b.get("/workers").json().findValuesAsText("instance_id"))
                    .as("the registrations travel with the tree")
                    .isEqualTo(a.get("/workers").json().findValuesAsText("instance_id"))
                    .isNotEmpty();
            assertThat(DumpRecoveryTest.canonical(b.get("/dump").json()))
                    .isEqualTo(DumpRecoveryTest.canonical(a.get("/dump").json()));
            // resolved addresses are for recovery only: /peers is what --peers and /register_peer keep
            assertThat(b.get("/peers").body()).isEqualTo("[]");

            // the third, with --peers too: its --peers come first (nothing answers there), then the name's
            IndexerProcess third = IndexerProcess.start(
                    jvm,
                    "--host",
                    "127.0.0.4",
                    "--port",
                    "" + port,
                    "--peers",
                    "http://127.0.0.9:" + port,
                    "--peers-dns",
                    target);
            replicas.add(third);
            HttpTestClient c = new HttpTestClient(third.url());
            await().atMost(Duration.ofSeconds(60)).until(() -> c.get("/ready").status() == 200);
            String out = third.output();
            assertThat(out)
                    .contains(
                            "P2P recovery from http://127.0.0.9:" + port + " failed",
                            "P2P recovery completed from http://127.0.0.2:" + port);
            assertThat(out.indexOf("127.0.0.9:" + port + " failed"))
                    .isLessThan(out.indexOf("completed from http://127.0.0.2"));
            assertThat(Replicas.score(c)).isEqualTo(8);
            assertThat(c.get("/peers").body()).isEqualTo("[\"http://127.0.0.9:" + port + "\"]");
        } finally {
            for (IndexerProcess r : replicas) {
                r.close();
            }
        }
    }

    @Test
    void aNameThatDoesNotResolveStartsEmpty() throws Exception {
        IndexerConfig cfg = IndexerConfig.defaults().with(c -> {
            c.recoveryDelay = Duration.ofMillis(20);
            c.peersDns = new PeerDiscovery.Target("no-such-peers.invalid", 8090);
        });
        try (IndexerApp app = IndexerApp.start(cfg);
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> http.get("/ready").status() == 200);
            assertThat(http.get("/dump").body()).isEqualTo("{}");
            assertThat(http.get("/peers").body()).isEqualTo("[]");
        }
    }

    /** A port nothing listens on at any of the addresses (the replicas share it, as pods share a Service port). */
    private static int portFreeOnAll(String... addresses) throws IOException {
        for (int attempt = 0; attempt < 50; attempt++) {
            int port;
            try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName(addresses[0]))) {
                port = s.getLocalPort();
            }
            if (freeOnAll(port, addresses)) {
                return port;
            }
        }
        throw new IllegalStateException("no port free on all of " + List.of(addresses));
    }

    private static boolean freeOnAll(int port, String... addresses) {
        for (String a : addresses) {
            try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getByName(a))) {
                s.getLocalPort();
            } catch (IOException e) {
                return false;
            }
        }
        return true;
    }
}

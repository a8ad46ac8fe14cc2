package io.kvindexer.operator.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.testkit.SecuredIndexer;
import io.kvindexer.operator.indexer.OperatorCa;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * The client keeps one TLS client per trusted CA. One whose CA no call uses any more (every KvIndexer of a namespace
 * deleted, the namespace's CA replaced) is closed once idle, with its selector thread: before, each CA ever called
 * kept its client, thread and connections for as long as the operator ran. Real indexers with two CAs.
 */
@Isolated("counts the JVM's HTTP client threads: no other class may run beside it")
class TlsClientIdleTest {

    @TempDir
    Path dir;

    /** The JDK HTTP clients' selector threads alive now. */
    private static Set<Thread> selectorThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t ->
                        t.getName().startsWith("HttpClient-") && t.getName().endsWith("-SelectorManager"))
                .collect(Collectors.toSet());
    }

    @Test
    void aClientWhoseCaIsNoLongerCalledIsClosedOnceIdle() throws Exception {
        Instant now = Instant.now();
        OperatorCa caA = OperatorCa.create("a", now);
        OperatorCa caB = OperatorCa.create("b", now);
        ReplicaAccess inA = new ReplicaAccess("a/kv", "https", null, caA.certPem());
        ReplicaAccess inB = new ReplicaAccess("b/kv", "https", null, caB.certPem());
        Duration idle = Duration.ofMillis(300);
        try (IndexerClient client = new IndexerClient(
                        Duration.ofSeconds(5), Duration.ofSeconds(30), IndexerClient.CallObserver.NONE, null, idle);
                IndexerApp a = serving("a", caA.issue("kv-0", List.of("kv.a.svc"), now));
                IndexerApp b = serving("b", caB.issue("kv-0", List.of("kv.b.svc"), now))) {
            IndexerEndpoint replicaA = IndexerEndpoint.of("kv-0", "127.0.0.1", a.port(), inA);
            IndexerEndpoint replicaB = IndexerEndpoint.of("kv-0", "127.0.0.1", b.port(), inB);
            Set<Thread> before = selectorThreads();
            assertThat(client.peers(replicaA)).isEmpty();
            Set<Thread> ofA = selectorThreads();
            ofA.removeAll(before);
            assertThat(ofA).as("the selector thread of A's TLS client").hasSize(1);

            // B is called on and on, A no more: A's client goes, B's stays while it is used
            long end = System.nanoTime() + idle.multipliedBy(4).toNanos();
            while (System.nanoTime() < end) {
                assertThat(client.peers(replicaB)).isEmpty();
                Thread.sleep(50);
            }
            assertThat(client.openTlsClients()).isEqualTo(1);
            await().atMost(Duration.ofSeconds(30)).until(() -> ofA.stream().noneMatch(Thread::isAlive));

            // A called again: a client made anew
            assertThat(client.peers(replicaA)).isEmpty();
            assertThat(client.openTlsClients()).isEqualTo(2);
        }
    }

    private IndexerApp serving(String name, OperatorCa.Pem pem) throws Exception {
        Path sub = Files.createDirectories(dir.resolve(name));
        Path cert = Files.writeString(sub.resolve("tls.crt"), pem.cert());
        Path key = Files.writeString(sub.resolve("tls.key"), pem.key());
        return SecuredIndexer.start(List.of("--tls-cert-file", cert.toString(), "--tls-key-file", key.toString()));
    }
}

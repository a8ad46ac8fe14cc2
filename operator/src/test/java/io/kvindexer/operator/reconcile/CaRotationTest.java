package io.kvindexer.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.testkit.SecuredIndexer;
import io.kvindexer.operator.client.IndexerClient;
import io.kvindexer.operator.client.IndexerEndpoint;
import io.kvindexer.operator.client.ReplicaAccess;
import io.kvindexer.operator.common.IndexerSecurity;
import io.kvindexer.operator.common.ServedAs;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.indexer.OperatorCa;
import io.kvindexer.operator.support.Resources;
import io.kvindexer.tls.PemFormat;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A KvIndexer's CA replaced mid-life: {@code ca.crt} of {@code <name>-tls} holds the new CA at once, while each
 * replica serves a certificate of the former one until its copy follows or it restarts. The operator must reach both
 * kinds meanwhile. Real TLS indexers, the Secret on the CRUD mock API server, the operator's own access path
 * ({@link ReplicaAccesses#byReplica}) and client.
 */
@EnableKubernetesMockClient(crud = true)
class CaRotationTest {
    static KubernetesClient client;
    private static final String NS = "ca-rotation";
    private static final KvIndexer KVI = Resources.kvIndexer(NS, "kv", 2, 8090);
    private static final ServedAs TLS = new ServedAs(true, "kv-tls", false, null);

    @TempDir
    Path dir;

    @Test
    void replicasStillServingTheFormerCaStayReachableUntilTheyRestart() throws Exception {
        Instant now = Instant.now();
        OperatorCa former = OperatorCa.create(NS, now);
        OperatorCa renewed = OperatorCa.create(NS, now);
        TrustedCas cas = new TrustedCas();
        writeSecret(former.certPem());
        try (IndexerClient http = client();
                IndexerApp r0 = serving("r0", former);
                IndexerApp r1 = serving("r1", former)) {
            List<IndexerReplica> replicas = List.of(replica(0, "uid-0"), replica(1, "uid-1"));
            Map<String, ReplicaAccess> before = ReplicaAccesses.byReplica(client, KVI, replicas, cas);
            assertThat(http.peers(endpoint("kv-0", r0, before))).isEmpty();
            assertThat(http.peers(endpoint("kv-1", r1, before))).isEmpty();

            // the CA is replaced: the Secret holds the new one; replica 1 restarts first and serves a certificate
            // of it, replica 0 still serves the former's
            writeSecret(renewed.certPem());
            ReplicaAccesses.byReplica(client, KVI, replicas, cas); // a reconcile before replica 1 restarts
            try (IndexerApp r1Again = serving("r1-again", renewed)) {
                List<IndexerReplica> rolling = List.of(replica(0, "uid-0"), replica(1, "uid-1b"));
                Map<String, ReplicaAccess> during = ReplicaAccesses.byReplica(client, KVI, rolling, cas);
                assertThat(http.peers(endpoint("kv-0", r0, during)))
                        .as("the replica that still serves a certificate of the former CA")
                        .isEmpty();
                assertThat(http.peers(endpoint("kv-1", r1Again, during))).isEmpty();
                // the restarted replica started with the new content: the former CA is not trusted for it
                assertThat(PemFormat.certificates(during.get("kv-1").caPem())).hasSize(1);
                assertThat(PemFormat.certificates(during.get("kv-0").caPem())).hasSize(2);

                // replica 0 restarts too: nothing runs that the former CA was kept for, so it is forgotten
                cas.retain(s -> true, Set.of("uid-0b", "uid-1b"));
                assertThat(cas.size()).as("the Secret's current CA only").isEqualTo(1);
            }
        }
    }

    /**
     * A {@code ca.crt} with several certificates (cert-manager's rotation can write the old CA beside the new one) is
     * trusted whole, even by an operator that never saw the Secret before (started during the rotation).
     */
    @Test
    void everyCertificateOfACaBundleIsTrusted() throws Exception {
        Instant now = Instant.now();
        OperatorCa former = OperatorCa.create(NS, now);
        OperatorCa renewed = OperatorCa.create(NS, now);
        writeSecret(renewed.certPem() + former.certPem());
        try (IndexerClient http = client();
                IndexerApp r0 = serving("b0", former);
                IndexerApp r1 = serving("b1", renewed)) {
            Map<String, ReplicaAccess> accesses = ReplicaAccesses.byReplica(
                    client, KVI, List.of(replica(0, "uid-0"), replica(1, "uid-1")), new TrustedCas());
            assertThat(http.peers(endpoint("kv-0", r0, accesses))).isEmpty();
            assertThat(http.peers(endpoint("kv-1", r1, accesses))).isEmpty();
        }
    }

    private static IndexerClient client() {
        return new IndexerClient(Duration.ofSeconds(5), Duration.ofSeconds(30), IndexerClient.CallObserver.NONE);
    }

    private static IndexerReplica replica(int ordinal, String uid) {
        return new IndexerReplica(ordinal, "kv-" + ordinal, "127.0.0.1", true, true, uid + "/127.0.0.1/0", TLS);
    }

    private static IndexerEndpoint endpoint(String pod, IndexerApp app, Map<String, ReplicaAccess> accesses) {
        return IndexerEndpoint.of(pod, "127.0.0.1", app.port(), accesses.get(pod));
    }

    /** The certificate Secret as a rotation leaves it: only {@code ca.crt} matters to the operator. */
    private static void writeSecret(String caPem) {
        client.secrets()
                .inNamespace(NS)
                .resource(new SecretBuilder()
                        .withNewMetadata()
                        .withName("kv-tls")
                        .withNamespace(NS)
                        .endMetadata()
                        .withStringData(Map.of(IndexerSecurity.CA_KEY, caPem))
                        .build())
                .createOr(r -> r.update());
    }

    /** A real TLS indexer serving a certificate that {@code ca} issued. */
    private IndexerApp serving(String name, OperatorCa ca) throws Exception {
        OperatorCa.Pem pem = ca.issue("kv." + NS + ".svc", List.of("kv." + NS + ".svc"), Instant.now());
        Path sub = Files.createDirectories(dir.resolve(name));
        Path cert = Files.writeString(sub.resolve("tls.crt"), pem.cert());
        Path key = Files.writeString(sub.resolve("tls.key"), pem.key());
        return SecuredIndexer.start(List.of("--tls-cert-file", cert.toString(), "--tls-key-file", key.toString()));
    }
}

package io.kvindexer.operator.e2e;

import static io.kvindexer.operator.support.OperatorHarness.WAIT;
import static io.kvindexer.operator.support.Resources.VLLM;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort;
import io.kvindexer.operator.client.IndexerClientException;
import io.kvindexer.operator.client.IndexerEndpoint;
import io.kvindexer.operator.client.ReplicaAccess;
import io.kvindexer.operator.client.WorkerRegistration;
import io.kvindexer.operator.common.IndexerSecurity;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.indexer.SecuritySecrets;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import io.kvindexer.tls.PemFormat;
import java.nio.charset.StandardCharsets;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A KvIndexer with no {@code spec.security} on the mock API server, real indexer processes as replicas: it gets its
 * token Secret, certificate Secret and NetworkPolicy; the replicas answer HTTPS only and refuse the control
 * endpoints without the token; the operator registers the engines over HTTPS with the token; each feature turned
 * off removes what the operator made for it.
 */
class SecureByDefaultEndToEndTest {
    @RegisterExtension
    static final OperatorHarness harness = OperatorHarness.onMockApiServer(Duration.ofSeconds(2));

    private static final String NS = "secure";

    /**
     * Turns {@code spec.security.<feature>} off and waits until the indexer's {@code flag} left the template. Its
     * Secret stays while a replica pod still mounts it (one of the old template, not restarted yet).
     */
    private void turnOff(String feature, String flag) {
        harness.mergePatch(
                KvIndexer.class, NS, "kv", "{\"spec\":{\"security\":{\"" + feature + "\":{\"enabled\":false}}}}");
        await().atMost(WAIT)
                .until(() -> !harness.indexerContainer(NS, "kv").getArgs().contains(flag));
    }

    private List<String> templateVolumes() {
        return harness.statefulSet(NS, "kv").getSpec().getTemplate().getSpec().getVolumes().stream()
                .map(v -> v.getName())
                .toList();
    }

    /** Every replica restarts with the current template, served over plain HTTP, the engines registered again. */
    private static void restartAll(LoopbackCluster cluster, KvIndexer open, Map<Long, String> expected)
            throws Exception {
        for (int i = 1; i >= 0; i--) {
            cluster.killReplica(NS, "kv", i);
        }
        for (int i = 0; i < 2; i++) {
            cluster.startReplica(NS, "kv", i);
        }
        for (int i = 0; i < 2; i++) {
            IndexerEndpoint r = cluster.replica(open, i);
            assertThat(r.baseUrl().getScheme()).isEqualTo("http");
            await().atMost(WAIT)
                    .ignoreExceptions()
                    .until(() -> cluster.registrations(r, "llama").equals(expected));
        }
    }

    private Secret secret(String name) {
        return harness.client().secrets().inNamespace(NS).withName(name).get();
    }

    private static String text(Secret s, String key) {
        return new String(Base64.getDecoder().decode(s.getData().get(key)), StandardCharsets.UTF_8);
    }

    private NetworkPolicy policy() {
        return harness.client()
                .network()
                .v1()
                .networkPolicies()
                .inNamespace(NS)
                .withName("kv")
                .get();
    }

    /** Secrets, the CA, the NetworkPolicy: nothing the operator asked is beyond its RBAC. */
    @AfterAll
    static void everyRequestIsOneTheRbacGrants() {
        harness.assertRequestsGranted();
    }

    @Test
    void aBareKvIndexerIsSecuredAndEachFeatureTurnsOff() throws Exception {
        int port = LoopbackCluster.freePort(LoopbackCluster.replicaIps(2));
        int zmqPort = LoopbackCluster.freePort(LoopbackCluster.engineIps(1));
        try (LoopbackCluster cluster = new LoopbackCluster(harness)) {
            KvIndexer kvi = cluster.startIndexer(NS, "kv", 2, port);
            String uid = kvi.getMetadata().getUid();

            // the token: 256 random bits, owned by the KvIndexer
            Secret auth = secret("kv-auth");
            String token = text(auth, IndexerSecurity.TOKEN_KEY);
            assertThat(Base64.getUrlDecoder().decode(token)).hasSize(32);
            assertThat(auth.getMetadata().getOwnerReferences())
                    .singleElement()
                    .satisfies(o -> assertThat(o.getUid()).isEqualTo(uid));
            // the certificate: issued by the namespace's CA for the Services' names, owned
            Secret tls = secret("kv-tls");
            assertThat(tls.getMetadata().getOwnerReferences())
                    .singleElement()
                    .satisfies(o -> assertThat(o.getUid()).isEqualTo(uid));
            X509Certificate leaf =
                    PemFormat.certificates(text(tls, IndexerSecurity.CERT_KEY)).getFirst();
            X509Certificate ca =
                    PemFormat.certificates(text(tls, IndexerSecurity.CA_KEY)).getFirst();
            leaf.verify(ca.getPublicKey());
            assertThat(leaf.getSubjectAlternativeNames())
                    .extracting(l -> (Object) l.get(1))
                    .contains(
                            "kv." + NS + ".svc", "*.kv-peers." + NS + ".svc", "kv-peers." + NS + ".svc.cluster.local");
            assertThat(text(secret(SecuritySecrets.CA_SECRET), IndexerSecurity.CERT_KEY)
                            .strip())
                    .isEqualTo(text(tls, IndexerSecurity.CA_KEY).strip());
            // the peer URLs the operator registers are https
            IndexerEndpoint r0 = cluster.replica(kvi, 0);
            await().atMost(WAIT)
                    .ignoreExceptions()
                    .until(() ->
                            cluster.http.peers(r0).equals(List.of("https://kv-1.kv-peers." + NS + ".svc:" + port)));

            // HTTPS only; the control endpoints refuse a caller without the token
            assertThat(r0.baseUrl().getScheme()).isEqualTo("https");
            IndexerEndpoint plain = IndexerEndpoint.of("kv-0", LoopbackCluster.replicaIp(0), port);
            assertThatThrownBy(() -> cluster.http.ready(plain)).isInstanceOf(IndexerClientException.class);
            IndexerEndpoint noToken = new IndexerEndpoint(
                    "kv-0",
                    r0.baseUrl(),
                    new ReplicaAccess("other", "https", null, r0.access().caPem()));
            assertThat(cluster.http.ready(noToken)).isTrue(); // the read side stays open
            WorkerRegistration fake = new WorkerRegistration(42L, 0, "tcp://127.0.0.1:1", null, null);
            assertThatThrownBy(() -> cluster.http.register(noToken, fake, "llama", "default", 4))
                    .isInstanceOfSatisfying(
                            IndexerClientException.class,
                            e -> assertThat(e.status()).isEqualTo(401));
            IndexerEndpoint wrongToken = new IndexerEndpoint(
                    "kv-0",
                    r0.baseUrl(),
                    new ReplicaAccess(
                            "other", "https", "not-the-token", r0.access().caPem()));
            assertThatThrownBy(() -> cluster.http.register(wrongToken, fake, "llama", "default", 4))
                    .isInstanceOfSatisfying(
                            IndexerClientException.class,
                            e -> assertThat(e.status()).isEqualTo(401));

            // the operator registers engine pods over HTTPS with the token
            cluster.startEngine(NS, "vllm-a", VLLM, 0, zmqPort, null);
            harness.create(Resources.kvWorker(NS, "vllm", "kv", VLLM, "llama", 4, zmqPort, null, 2));
            Map<Long, String> expected = LoopbackCluster.engineEndpoints(NS, Map.of("vllm-a", 0), zmqPort);
            for (int i = 0; i < 2; i++) {
                IndexerEndpoint r = cluster.replica(kvi, i);
                await().atMost(WAIT)
                        .ignoreExceptions()
                        .until(() -> cluster.registrations(r, "llama").equals(expected));
            }

            // the NetworkPolicy: HTTP port in, engines' event ports (both ranks), replicas and DNS out
            await().atMost(WAIT)
                    .until(() ->
                            policy() != null && policy().getSpec().getEgress().size() == 3);
            NetworkPolicy np = policy();
            assertThat(np.getMetadata().getOwnerReferences())
                    .singleElement()
                    .satisfies(o -> assertThat(o.getUid()).isEqualTo(uid));
            assertThat(np.getSpec().getIngress()).singleElement().satisfies(in -> {
                assertThat(in.getPorts())
                        .extracting(p -> p.getPort().getIntVal())
                        .containsExactly(port);
                assertThat(in.getFrom()).hasSize(2); // the operator's pods, the replicas
            });
            NetworkPolicyPort engines =
                    np.getSpec().getEgress().getFirst().getPorts().getFirst();
            assertThat(engines.getPort().getIntVal()).isEqualTo(zmqPort);
            assertThat(engines.getEndPort()).isEqualTo(zmqPort + 1);
            assertThat(np.getSpec()
                            .getEgress()
                            .get(0)
                            .getTo()
                            .getFirst()
                            .getPodSelector()
                            .getMatchLabels())
                    .isEqualTo(VLLM);

            // allowTo opens more egress, after the operator's own rules (an OTLP collector)
            harness.mergePatch(KvIndexer.class, NS, "kv", """
                    {"spec":{"networkPolicy":{"allowTo":[{"to":[{"namespaceSelector":{"matchLabels":\
                    {"kubernetes.io/metadata.name":"observability"}}}],"ports":[{"protocol":"TCP","port":4317}]}]}}}""");
            await().atMost(WAIT).until(() -> policy().getSpec().getEgress().size() == 4);
            assertThat(policy().getSpec().getEgress().getLast()).satisfies(out -> {
                assertThat(out.getPorts())
                        .singleElement()
                        .satisfies(p -> assertThat(p.getPort().getIntVal()).isEqualTo(4317));
                assertThat(out.getTo().getFirst().getNamespaceSelector().getMatchLabels())
                        .containsEntry("kubernetes.io/metadata.name", "observability");
            });
            assertThat(policy().getSpec()
                            .getEgress()
                            .getFirst()
                            .getPorts()
                            .getFirst()
                            .getPort()
                            .getIntVal())
                    .as("the engines' rule stays")
                    .isEqualTo(zmqPort);

            // each feature off removes what it owned
            harness.mergePatch(KvIndexer.class, NS, "kv", "{\"spec\":{\"networkPolicy\":{\"enabled\":false}}}");
            await().atMost(WAIT).until(() -> policy() == null);
            turnOff("tls", "--tls-cert-file");
            assertThat(harness.indexerContainer(NS, "kv")
                            .getReadinessProbe()
                            .getHttpGet()
                            .getScheme())
                    .isEqualTo("HTTP");
            assertThat(secret("kv-auth")).isNotNull();
            turnOff("auth", "--auth-token-file");
            // the replicas still serve HTTPS with the token: a restarted one needs their CA and token to recover
            // from them, so the template mounts both Secrets for its peer calls only (FormerPeers)
            assertThat(templateVolumes()).containsExactly("tmp", "tls", "auth-token");
            assertThat(harness.indexerContainer(NS, "kv").getArgs())
                    .contains("--tls-ca-file", "--peer-auth-token-file")
                    .doesNotContain("--tls-cert-file", "--auth-token-file");

            // the replicas restart as the new template says: plain HTTP, no token, engines registered again
            KvIndexer open = harness.kvIndexer(NS, "kv");
            restartAll(cluster, open, expected);
            // none serves as before any more: the Secrets leave the template, a second rollout follows
            await().atMost(WAIT).until(() -> templateVolumes().equals(List.of("tmp")));
            assertThat(secret("kv-tls"))
                    .as("mounted by the pods until they restart")
                    .isNotNull();
            restartAll(cluster, open, expected);
            // no pod mounts the Secrets any more: they go
            await().atMost(WAIT).until(() -> secret("kv-tls") == null && secret("kv-auth") == null);
            harness.deleteKvWorkers(NS, WAIT);
        }
    }
}

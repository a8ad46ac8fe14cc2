package io.kvindexer.operator.indexer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.recovery.PeerHttpClients;
import io.kvindexer.indexer.testkit.SecuredIndexer;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.common.IndexerSecurity;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.reconcile.ReplicaAccesses;
import io.kvindexer.operator.support.GrantedRbac;
import io.kvindexer.operator.support.Resources;
import io.kvindexer.tls.PemFormat;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The operator renews its CA ({@code kv-indexer-ca} within a third of its life from expiry): {@code ca.crt} of
 * {@code <name>-tls} holds the new CA and the former one while a replica still serves a certificate of the former,
 * so its peers ({@code --tls-ca-file}) and Prometheus keep trusting it, even across an operator restart (the bundle
 * is in the Secret); the former CA leaves once every replica serves the new certificate, in a write the operator's
 * RBAC grants. A real TLS indexer as the replica, the Secrets on the CRUD mock API server.
 */
@EnableKubernetesMockClient(crud = true)
class CaRenewalBundleTest {
    private static final String NS = "renewal";

    KubernetesClient client;
    KubernetesMockServer server;

    @TempDir
    Path dir;

    @Test
    void aReplicaStillServingTheFormerCasCertificateStaysTrustedUntilItServesTheNewOne() throws Exception {
        Instant now = Instant.now();
        // a CA made 2500 of its 3650 days ago: within a third of its life from expiry, renewed at the next reconcile
        OperatorCa former = OperatorCa.create(NS, now.minus(Duration.ofDays(2500)));
        Path cert = dir.resolve("tls.crt");
        Path key = dir.resolve("tls.key");
        OperatorCa.Pem old = former.issue("kv." + NS + ".svc", List.of("kv." + NS + ".svc"), now);
        Files.writeString(cert, old.cert());
        Files.writeString(key, old.key());
        try (IndexerApp replica =
                SecuredIndexer.start(List.of("--tls-cert-file", cert.toString(), "--tls-key-file", key.toString()))) {
            KvIndexer kvi = Resources.kvIndexer(NS, "kv", 1, replica.port());
            kvi.getMetadata().setUid("uid-kv");
            // as an earlier reconcile left them: the CA, and the replica's certificate Secret issued by it
            writeSecret(
                    SecuritySecrets.CA_SECRET,
                    Map.of(
                            IndexerSecurity.CERT_KEY,
                            former.pem().cert(),
                            IndexerSecurity.KEY_KEY,
                            former.pem().key()));
            client.secrets()
                    .inNamespace(NS)
                    .resource(new SecretBuilder()
                            .withMetadata(SecuritySecrets.owned(
                                    kvi,
                                    "kv-tls",
                                    Map.of(SecuritySecrets.LABEL_ISSUER, SecuritySecrets.ISSUER_OPERATOR)))
                            .withType("kubernetes.io/tls")
                            .withData(b64(Map.of(
                                    IndexerSecurity.CERT_KEY, old.cert(),
                                    IndexerSecurity.KEY_KEY, old.key(),
                                    IndexerSecurity.CA_KEY, former.certPem())))
                            .build())
                    .create();
            client.pods()
                    .inNamespace(NS)
                    .resource(new PodBuilder()
                            .withNewMetadata()
                            .withName("kv-0")
                            .withNamespace(NS)
                            .withLabels(IndexerNames.selectorLabels(kvi))
                            .endMetadata()
                            .withNewStatus()
                            .withPodIP("127.0.0.1")
                            .endStatus()
                            .build())
                    .create();
            GrantedRbac.forget(server); // the test's own writes

            SecuritySecrets.reconcile(client, kvi, now);
            X509Certificate renewed = PemFormat.certificates(
                            ReplicaAccesses.value(secret(SecuritySecrets.CA_SECRET), IndexerSecurity.CERT_KEY))
                    .getFirst();
            assertThat(renewed).isNotEqualTo(former.certificate());
            assertThat(PemFormat.certificates(caCrt()))
                    .as("the new CA first, then the former one the replica's certificate still chains to")
                    .containsExactly(renewed, former.certificate());
            X509Certificate issued = PemFormat.certificates(
                            ReplicaAccesses.value(secret("kv-tls"), IndexerSecurity.CERT_KEY))
                    .getFirst();
            issued.verify(renewed.getPublicKey());

            // a peer recovering with --tls-ca-file (the indexer's own client for it) trusts the replica by the
            // bundle; by the new CA alone it would not
            Path bundle = Files.writeString(dir.resolve("ca.crt"), caCrt());
            assertThat(ready(bundle, replica)).isEqualTo(200);
            Path newOnly = Files.writeString(dir.resolve("new-ca.crt"), PemFormat.certificate(renewed));
            assertThatThrownBy(() -> ready(newOnly, replica)).hasStackTraceContaining("SSLHandshakeException");
            // and a real replica started with the bundle as --tls-ca-file recovers from it (a blank peer: it holds
            // no block, but answered the dump)
            try (IndexerApp peer = IndexerApp.start(new String[] {
                "--host", "127.0.0.1", "--port", "0", "--tls-ca-file", bundle.toString(), "--peers", replica.baseUrl()
            })) {
                await().atMost(Duration.ofSeconds(60))
                        .pollInterval(Duration.ofMillis(200))
                        .until(() -> recoverySource(peer) != null);
                assertThat(recoverySource(peer)).isEqualTo("blank_peer");
            }

            // reconciles meanwhile (a restarted operator among them: nothing but the Secrets is read) keep it
            SecuritySecrets.reconcile(client, kvi, now);
            assertThat(PemFormat.certificates(caCrt())).containsExactly(renewed, former.certificate());

            // the replica reloads its copy of the Secret: it serves the new certificate, and the former CA goes
            Secret tls = secret("kv-tls");
            Files.writeString(key, ReplicaAccesses.value(tls, IndexerSecurity.KEY_KEY));
            Files.writeString(cert, ReplicaAccesses.value(tls, IndexerSecurity.CERT_KEY));
            await().atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(500))
                    .until(() -> {
                        SecuritySecrets.reconcile(client, kvi, now);
                        return PemFormat.certificates(caCrt()).size() == 1;
                    });
            assertThat(PemFormat.certificates(caCrt())).containsExactly(renewed);
            assertThat(ReplicaAccesses.value(secret("kv-tls"), IndexerSecurity.CERT_KEY))
                    .as("the certificate is kept: only ca.crt changed")
                    .isEqualTo(ReplicaAccesses.value(tls, IndexerSecurity.CERT_KEY));
            assertThat(ready(bundle, replica)).isEqualTo(200);
            GrantedRbac.assertGranted(server); // the bundle rewritten as the RBAC allows: Secrets have no patch
        }
    }

    /**
     * The former CA also leaves once it has expired, whatever the replicas serve (it vouches for nothing then): here
     * a replica pod without an address yet, which is never known to serve the new certificate.
     */
    @Test
    void anExpiredFormerCaLeavesTheBundle() throws Exception {
        Instant now = Instant.now();
        KvIndexer kvi = Resources.kvIndexer(NS, "kv", 1, 1);
        kvi.getMetadata().setUid("uid-kv");
        client.pods()
                .inNamespace(NS)
                .resource(new PodBuilder()
                        .withNewMetadata()
                        .withName("kv-0")
                        .withNamespace(NS)
                        .withLabels(IndexerNames.selectorLabels(kvi))
                        .endMetadata()
                        .build())
                .create();
        OperatorCa former = OperatorCa.create(NS, now.minus(Duration.ofDays(2500)));
        writeSecret(
                SecuritySecrets.CA_SECRET,
                Map.of(
                        IndexerSecurity.CERT_KEY,
                        former.pem().cert(),
                        IndexerSecurity.KEY_KEY,
                        former.pem().key()));
        SecuritySecrets.reconcile(client, kvi, now.minus(Duration.ofDays(200))); // issued by the former CA
        assertThat(PemFormat.certificates(caCrt())).containsExactly(former.certificate());
        SecuritySecrets.reconcile(client, kvi, now); // the CA renewed
        assertThat(PemFormat.certificates(caCrt())).hasSize(2).endsWith(former.certificate());
        SecuritySecrets.reconcile(client, kvi, now.plus(Duration.ofDays(10)));
        assertThat(PemFormat.certificates(caCrt())).hasSize(2);

        SecuritySecrets.reconcile(client, kvi, now.plus(Duration.ofDays(1160))); // the former CA has expired
        assertThat(PemFormat.certificates(caCrt())).hasSize(1).doesNotContain(former.certificate());
    }

    private int ready(Path caFile, IndexerApp replica) throws Exception {
        String url = "https://127.0.0.1:" + replica.port() + "/ready";
        try (HttpClient http = PeerHttpClients.create(Duration.ofSeconds(10), caFile, List.of(url))) {
            return http.send(
                            HttpRequest.newBuilder(URI.create(url))
                                    .timeout(Duration.ofSeconds(30))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString())
                    .statusCode();
        }
    }

    /** The {@code source} of the startup-recovery gauge, once recovery is over; null before. */
    private static String recoverySource(IndexerApp app) throws Exception {
        try (HttpClient http = HttpClient.newHttpClient()) {
            String metrics = http.send(
                            HttpRequest.newBuilder(URI.create(app.baseUrl() + "/metrics"))
                                    .timeout(Duration.ofSeconds(30))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString())
                    .body();
            Matcher m = Pattern.compile("dynamo_kvindexer_startup_recovery_seconds\\{[^}]*source=\"([a-z_]+)\"")
                    .matcher(metrics);
            return m.find() ? m.group(1) : null;
        }
    }

    private String caCrt() {
        return ReplicaAccesses.value(secret("kv-tls"), IndexerSecurity.CA_KEY);
    }

    private Secret secret(String name) {
        return client.secrets().inNamespace(NS).withName(name).get();
    }

    /** As the operator writes it (its CA is renewed: one the operator did not make is never replaced). */
    private void writeSecret(String name, Map<String, String> data) {
        client.secrets()
                .inNamespace(NS)
                .resource(new SecretBuilder()
                        .withNewMetadata()
                        .withName(name)
                        .withNamespace(NS)
                        .withLabels(Map.of(IndexerNames.LABEL_MANAGED_BY, IndexerNames.MANAGED_BY))
                        .endMetadata()
                        .withData(b64(data))
                        .build())
                .create();
    }

    private static Map<String, String> b64(Map<String, String> data) {
        Map<String, String> encoded = new java.util.LinkedHashMap<>();
        data.forEach((k, v) -> encoded.put(k, Base64.getEncoder().encodeToString(v.getBytes(StandardCharsets.UTF_8))));
        return encoded;
    }
}

package io.kvindexer.operator.indexer;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.kvindexer.operator.common.IndexerSecurity;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.Security;
import io.kvindexer.operator.reconcile.ReplicaAccesses;
import io.kvindexer.operator.support.Resources;
import io.kvindexer.tls.PemFormat;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;

/** The Secrets a KvIndexer's pods mount, on a CRUD mock API server: made once, kept, renewed in time. */
@EnableKubernetesMockClient(crud = true)
class SecuritySecretsTest {
    KubernetesClient client;

    private KvIndexer kvi() {
        KvIndexer kvi = Resources.kvIndexer("ns", "kv", 2, 8090);
        kvi.getMetadata().setUid("uid-1");
        return kvi;
    }

    private Secret secret(String name) {
        return client.secrets().inNamespace("ns").withName(name).get();
    }

    private X509Certificate served(String name) throws Exception {
        return PemFormat.certificates(ReplicaAccesses.value(secret(name), IndexerSecurity.CERT_KEY))
                .getFirst();
    }

    @Test
    void theTokenIsMadeOnceAndTheCertificateRenewedWithAThirdOfItsLifeLeft() throws Exception {
        KvIndexer kvi = kvi();
        Instant t0 = Instant.parse("2026-12-01T00:00:00Z");
        assertThat(SecuritySecrets.reconcile(client, kvi, t0)).isNull();
        String token = ReplicaAccesses.value(secret("kv-auth"), IndexerSecurity.TOKEN_KEY);
        X509Certificate first = served("kv-tls");
        assertThat(first.getNotAfter().toInstant()).isAfter(t0.plus(Duration.ofDays(89)));

        SecuritySecrets.reconcile(client, kvi, t0.plus(Duration.ofDays(59)));
        assertThat(ReplicaAccesses.value(secret("kv-auth"), IndexerSecurity.TOKEN_KEY))
                .isEqualTo(token);
        assertThat(served("kv-tls").getSerialNumber()).isEqualTo(first.getSerialNumber());

        SecuritySecrets.reconcile(client, kvi, t0.plus(Duration.ofDays(61)));
        X509Certificate renewed = served("kv-tls");
        assertThat(renewed.getSerialNumber()).isNotEqualTo(first.getSerialNumber());
        assertThat(renewed.getNotAfter()).isAfter(first.getNotAfter());
        assertThat(ReplicaAccesses.value(secret("kv-auth"), IndexerSecurity.TOKEN_KEY))
                .isEqualTo(token);

        // the access the operator uses: https, the token, the CA that issued the certificate
        var access = ReplicaAccesses.read(client, kvi);
        assertThat(access.scheme()).isEqualTo("https");
        assertThat(access.token()).isEqualTo(token);
        renewed.verify(PemFormat.certificates(access.caPem()).getFirst().getPublicKey());
    }

    @Test
    void anIssuerRefWithoutCertManagerFallsBackToTheOperatorCaWithAWarning() {
        KvIndexer kvi = kvi();
        kvi.getSpec()
                .setSecurity(new Security(new Security.Tls(null, new Security.IssuerRef("corp-ca", null, null)), null));
        String warning = SecuritySecrets.reconcile(client, kvi, Instant.now());
        assertThat(warning).contains("corp-ca", "not installed");
        assertThat(secret("kv-tls").getMetadata().getLabels())
                .containsEntry(SecuritySecrets.LABEL_ISSUER, SecuritySecrets.ISSUER_OPERATOR);
    }

    @Test
    void theCertManagerCertificateAsksForTheServiceNamesAndAPkcs8Key() {
        KvIndexer kvi = kvi();
        GenericKubernetesResource cert =
                SecuritySecrets.CertManager.desired(kvi, new Security.IssuerRef("corp-ca", "ClusterIssuer", null));
        @SuppressWarnings("unchecked")
        Map<String, Object> spec =
                (Map<String, Object>) cert.getAdditionalProperties().get("spec");
        assertThat(cert.getApiVersion()).isEqualTo("cert-manager.io/v1");
        assertThat(spec).containsEntry("secretName", "kv-tls");
        assertThat(spec.get("issuerRef"))
                .isEqualTo(Map.of("name", "corp-ca", "kind", "ClusterIssuer", "group", "cert-manager.io"));
        assertThat(spec.get("dnsNames"))
                .asInstanceOf(InstanceOfAssertFactories.list(String.class))
                .contains("kv.ns.svc", "*.kv-peers.ns.svc");
        assertThat(spec.get("privateKey"))
                .asInstanceOf(InstanceOfAssertFactories.map(String.class, Object.class))
                .containsEntry("encoding", "PKCS8");
        assertThat(cert.getMetadata().getOwnerReferences())
                .singleElement()
                .satisfies(o -> assertThat(o.getUid()).isEqualTo("uid-1"));
    }

    @Test
    void turningBothOffDeletesWhatTheOperatorMade() {
        KvIndexer kvi = kvi();
        SecuritySecrets.reconcile(client, kvi, Instant.now());
        assertThat(secret("kv-auth")).isNotNull();
        kvi.getSpec().setSecurity(new Security(new Security.Tls(false, null), new Security.Auth(false)));
        SecuritySecrets.reconcile(client, kvi, Instant.now());
        assertThat(secret("kv-auth")).isNull();
        assertThat(secret("kv-tls")).isNull();
        assertThat(secret(SecuritySecrets.CA_SECRET))
                .as("the namespace's CA stays for the others")
                .isNotNull();
        assertThat(ReplicaAccesses.read(client, kvi).scheme()).isEqualTo("http");
    }
}

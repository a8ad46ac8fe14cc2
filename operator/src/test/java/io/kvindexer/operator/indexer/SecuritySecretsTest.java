package io.kvindexer.operator.indexer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.common.IndexerSecurity;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.Security;
import io.kvindexer.operator.reconcile.ReplicaAccesses;
import io.kvindexer.operator.support.Resources;
import io.kvindexer.tls.PemFormat;
import java.nio.charset.StandardCharsets;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
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

    /**
     * A {@code kv-indexer-ca} the operator did not make was replaced when it did not read as a CA (or neared its end):
     * now it is used while it is a CA, and refused, untouched, otherwise.
     */
    @Test
    void aCaSecretTheOperatorDidNotMakeIsNeverOverwritten() {
        Instant now = Instant.parse("2026-12-01T00:00:00Z");
        Secret users = client.secrets()
                .inNamespace("ns")
                .resource(new SecretBuilder()
                        .withNewMetadata()
                        .withName(SecuritySecrets.CA_SECRET)
                        .withNamespace("ns")
                        .endMetadata()
                        .withStringData(Map.of("password", "the user's"))
                        .build())
                .create();
        assertThatThrownBy(() -> SecuritySecrets.ca(client, "ns", now))
                .hasMessageContaining("Secret kv-indexer-ca of namespace ns")
                .hasMessageContaining("was not made by the operator, which does not overwrite it: delete it");
        assertThat(secret(SecuritySecrets.CA_SECRET).getData()).isEqualTo(users.getData());

        // the user's CA, within a third of its life from expiry: issued from, not replaced
        OperatorCa own = OperatorCa.create("ns", now.minus(Duration.ofDays(2500)));
        client.secrets()
                .inNamespace("ns")
                .resource(new SecretBuilder(users)
                        .withData(null)
                        .withStringData(Map.of(
                                IndexerSecurity.CERT_KEY,
                                own.pem().cert(),
                                IndexerSecurity.KEY_KEY,
                                own.pem().key()))
                        .build())
                .update();
        assertThat(SecuritySecrets.ca(client, "ns", now).certificate()).isEqualTo(own.certificate());
        assertThat(secret(SecuritySecrets.CA_SECRET).getMetadata().getLabels()).isNullOrEmpty();
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

    /**
     * Turning auth off mid-life: the pods of the old template mount {@code <name>-auth}, and one recreated before the
     * rollout reaches it would wait for the Secret in ContainerCreating, stopping an OrderedReady rollout. So the
     * Secret goes only once neither the StatefulSet's template nor any replica mounts it, as after the rename below.
     */
    @Test
    void turningAuthOffDeletesTheTokenSecretOnceNoReplicaMountsIt() {
        KvIndexer kvi = kvi();
        SecuritySecrets.reconcile(client, kvi, Instant.now());
        String before = token("kv-auth");
        OldTemplate rollout = oldTemplate(kvi);

        kvi.getSpec().setSecurity(new Security(null, new Security.Auth(false)));
        SecuritySecrets.reconcile(client, kvi, Instant.now());
        assertThat(token("kv-auth"))
                .as("kept while the StatefulSet's template mounts it (the Secrets are kept before it is written)")
                .isEqualTo(before);

        // the StatefulSet's new template mounts no token; replica 0 is still of the old one
        rollout.templateNow(kvi);
        SecuritySecrets.reconcile(client, kvi, Instant.now());
        assertThat(token("kv-auth"))
                .as("kept while a replica of the old template mounts it")
                .isEqualTo(before);

        rollout.oldReplicaGone();
        SecuritySecrets.reconcile(client, kvi, Instant.now());
        assertThat(secret("kv-auth")).isNull();
        assertThat(secret("kv-tls")).as("TLS is still on").isNotNull();
    }

    @Test
    void turningTlsOffDeletesTheCertificateSecretOnceNoReplicaMountsIt() {
        KvIndexer kvi = kvi();
        SecuritySecrets.reconcile(client, kvi, Instant.now());
        assertThat(secret("kv-tls")).isNotNull();
        OldTemplate rollout = oldTemplate(kvi);

        kvi.getSpec().setSecurity(new Security(new Security.Tls(false, null), null));
        SecuritySecrets.reconcile(client, kvi, Instant.now());
        assertThat(secret("kv-tls"))
                .as("kept while the StatefulSet's template mounts it")
                .isNotNull();

        rollout.templateNow(kvi);
        SecuritySecrets.reconcile(client, kvi, Instant.now());
        assertThat(secret("kv-tls"))
                .as("kept while a replica of the old template mounts it")
                .isNotNull();

        rollout.oldReplicaGone();
        SecuritySecrets.reconcile(client, kvi, Instant.now());
        assertThat(secret("kv-tls")).isNull();
        assertThat(secret("kv-auth")).as("auth is still on").isNotNull();
    }

    /** A StatefulSet and its replica kv-0, both of the template {@code kvi} has now (before a change to it). */
    private OldTemplate oldTemplate(KvIndexer kvi) {
        var template = IndexerDesiredState.statefulSet(kvi).getSpec().getTemplate();
        Pod old = client.pods()
                .inNamespace("ns")
                .resource(new PodBuilder()
                        .withNewMetadata()
                        .withName("kv-0")
                        .withLabels(IndexerNames.selectorLabels(kvi))
                        .endMetadata()
                        .withSpec(template.getSpec())
                        .build())
                .create();
        StatefulSet sts = new StatefulSetBuilder()
                .withNewMetadata()
                .withName(IndexerNames.statefulSet(kvi))
                .endMetadata()
                .withNewSpec()
                .withTemplate(template)
                .endSpec()
                .build();
        client.apps().statefulSets().inNamespace("ns").resource(sts).create();
        return new OldTemplate(old, sts);
    }

    /** A rollout under way: the StatefulSet gets the new template, then the old replica goes. */
    private final class OldTemplate {
        private final Pod old;
        private final StatefulSet sts;

        OldTemplate(Pod old, StatefulSet sts) {
            this.old = old;
            this.sts = sts;
        }

        void templateNow(KvIndexer kvi) {
            sts.getSpec()
                    .setTemplate(IndexerDesiredState.statefulSet(kvi).getSpec().getTemplate());
            client.apps().statefulSets().inNamespace("ns").resource(sts).update();
        }

        void oldReplicaGone() {
            client.pods().inNamespace("ns").resource(old).delete();
            await().atMost(Duration.ofSeconds(30))
                    .until(() ->
                            client.pods().inNamespace("ns").withName("kv-0").get() == null);
        }
    }

    private KvIndexer named(String name) {
        KvIndexer kvi = Resources.kvIndexer("ns", name, 2, 8090);
        kvi.getMetadata().setUid("uid-" + name);
        return kvi;
    }

    private Secret tokenSecret(String name, String token, KvIndexer owner) {
        var meta = new ObjectMetaBuilder().withName(name).withNamespace("ns");
        if (owner != null) {
            meta.withOwnerReferences(SecuritySecrets.ownerReference(owner));
        }
        return client.secrets()
                .inNamespace("ns")
                .resource(new SecretBuilder()
                        .withMetadata(meta.build())
                        .withData(Map.of(
                                IndexerSecurity.TOKEN_KEY,
                                Base64.getEncoder().encodeToString(token.getBytes(StandardCharsets.UTF_8))))
                        .build())
                .create();
    }

    private String token(String secret) {
        return ReplicaAccesses.value(secret(secret), IndexerSecurity.TOKEN_KEY);
    }

    /**
     * A KvIndexer named kv-indexer (the chart example's) must not keep its token in kv-indexer-auth, the namespace-wide
     * Secret that pods with authentication off read and the chart's operator takes as its own token.
     */
    @Test
    void aKvIndexerNamedKvIndexerKeepsItsTokenOutOfTheNamespaceWideSecret() {
        KvIndexer example = named("kv-indexer");
        SecuritySecrets.reconcile(client, example, Instant.now());
        assertThat(secret(AuthSecret.SECRET_NAME))
                .as("the namespace-wide Secret")
                .isNull();
        String own = token("kv-indexer-token");
        assertThat(own).isNotBlank();
        assertThat(ReplicaAccesses.read(client, example).token()).isEqualTo(own);
        assertThat(IndexerDesiredState.statefulSet(example)
                        .getSpec()
                        .getTemplate()
                        .getSpec()
                        .getVolumes())
                .extracting(v -> v.getSecret() == null ? null : v.getSecret().getSecretName())
                .contains("kv-indexer-token")
                .doesNotContain(AuthSecret.SECRET_NAME);

        // the user's namespace-wide Secret is theirs: neither taken as the KvIndexer's token nor deleted
        client.secrets().inNamespace("ns").withName("kv-indexer-token").delete();
        tokenSecret(AuthSecret.SECRET_NAME, "shared", null);
        SecuritySecrets.reconcile(client, example, Instant.now());
        assertThat(token(AuthSecret.SECRET_NAME)).isEqualTo("shared");
        assertThat(token("kv-indexer-token")).isNotBlank().isNotEqualTo("shared");
        example.getSpec().setSecurity(new Security(null, new Security.Auth(false)));
        SecuritySecrets.reconcile(client, example, Instant.now());
        assertThat(secret("kv-indexer-token")).isNull();
        assertThat(token(AuthSecret.SECRET_NAME)).isEqualTo("shared");

        // no other name can be the namespace-wide one, nor another KvIndexer's token or certificate Secret
        for (String name : List.of("kv", "kv-indexer-auth", "kv-indexer-token", "kv-indexer-tls", "kv-indexe")) {
            assertThat(IndexerSecurity.tokenSecret(named(name)))
                    .isNotEqualTo(AuthSecret.SECRET_NAME)
                    .isNotEqualTo(IndexerSecurity.tokenSecret(example))
                    .isNotEqualTo(IndexerSecurity.tlsSecret(named(name)));
        }
        assertThat(IndexerSecurity.tokenSecret(named("kv"))).isEqualTo("kv-auth");
    }

    /**
     * Upgrading from a version that kept kv-indexer's token in kv-indexer-auth: the token moves (the same value, so
     * replicas not yet restarted and their callers keep working), and the old Secret goes once no pod mounts it.
     */
    @Test
    void anUpgradeMovesTheTokenAndDeletesTheFormerSecretOnceNoReplicaMountsIt() {
        KvIndexer example = named("kv-indexer");
        tokenSecret(AuthSecret.SECRET_NAME, "before", example);
        Pod old = client.pods()
                .inNamespace("ns")
                .resource(new PodBuilder()
                        .withNewMetadata()
                        .withName("kv-indexer-0")
                        .withLabels(IndexerNames.selectorLabels(example))
                        .endMetadata()
                        .withNewSpec()
                        .addNewVolume()
                        .withName("auth-token")
                        .withNewSecret()
                        .withSecretName(AuthSecret.SECRET_NAME)
                        .endSecret()
                        .endVolume()
                        .endSpec()
                        .build())
                .create();
        StatefulSet sts = new StatefulSetBuilder()
                .withNewMetadata()
                .withName("kv-indexer")
                .endMetadata()
                .withNewSpec()
                .withNewTemplate()
                .withSpec(old.getSpec())
                .endTemplate()
                .endSpec()
                .build();
        client.apps().statefulSets().inNamespace("ns").resource(sts).create();

        SecuritySecrets.reconcile(client, example, Instant.now());
        assertThat(token("kv-indexer-token")).isEqualTo("before");
        assertThat(token(AuthSecret.SECRET_NAME))
                .as("kept while the StatefulSet's template mounts it")
                .isEqualTo("before");

        // the StatefulSet's new template mounts the new Secret; replica 0 is still of the old one
        sts.getSpec()
                .setTemplate(IndexerDesiredState.statefulSet(example).getSpec().getTemplate());
        client.apps().statefulSets().inNamespace("ns").resource(sts).update();
        SecuritySecrets.reconcile(client, example, Instant.now());
        assertThat(token(AuthSecret.SECRET_NAME))
                .as("kept while a replica of the old template mounts it")
                .isEqualTo("before");

        client.pods().inNamespace("ns").resource(old).delete();
        await().atMost(Duration.ofSeconds(30))
                .until(() ->
                        client.pods().inNamespace("ns").withName("kv-indexer-0").get() == null);
        SecuritySecrets.reconcile(client, example, Instant.now());
        assertThat(secret(AuthSecret.SECRET_NAME)).isNull();
        assertThat(token("kv-indexer-token")).isEqualTo("before");
    }
}

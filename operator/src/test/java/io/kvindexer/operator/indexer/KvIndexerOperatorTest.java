package io.kvindexer.operator.indexer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.TolerationBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.kvindexer.operator.common.IndexerSecurity;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.Persistence;
import io.kvindexer.operator.crd.v1alpha1.PodTemplateOverrides;
import io.kvindexer.operator.reconcile.ReplicaAccesses;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import io.kvindexer.tls.PemFormat;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The KvIndexer controller running against the CRUD mock: the objects it owns, their owner references and labels,
 * the PDB's life, and the status (no indexer process needed: no pod becomes Ready here).
 */
@EnableKubernetesMockClient(crud = true)
class KvIndexerOperatorTest {
    static KubernetesClient client;
    private static final String NS = "kvi-objects";
    /**
     * One operator for the class (each test has KvIndexers of its own names): one started per test reconciled every
     * earlier test's KvIndexer again from cold caches.
     */
    private static OperatorHarness harness;

    @BeforeAll
    static void start() {
        harness = new OperatorHarness(client, Duration.ofSeconds(2));
    }

    @AfterAll
    static void stop() {
        harness.close();
    }

    @Test
    void createsOwnedObjectsWithOwnerReferencesAndLabels() {
        harness.create(Resources.kvIndexer(NS, "idx", 2, 8090));

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            StatefulSet sts = harness.statefulSet(NS, "idx");
            assertThat(sts).isNotNull();
            assertThat(sts.getSpec().getReplicas()).isEqualTo(2);
            assertThat(sts.getSpec().getServiceName()).isEqualTo("idx-peers");
            assertThat(sts.getMetadata().getOwnerReferences())
                    .singleElement()
                    .satisfies(o -> assertThat(o.getKind()).isEqualTo("KvIndexer"));
            assertThat(sts.getMetadata().getLabels())
                    .containsEntry("app.kubernetes.io/managed-by", "kv-indexer-operator")
                    .containsEntry("app.kubernetes.io/instance", "idx");
            var c = sts.getSpec().getTemplate().getSpec().getContainers().getFirst();
            // peers are found through the headless Service at startup: nothing in the template depends on replicas
            assertThat(c.getArgs())
                    .containsSubsequence("--peers-dns", "idx-peers.kvi-objects.svc:8090")
                    .doesNotContain("--peers");
            assertThat(sts.getSpec().getPodManagementPolicy()).isEqualTo("OrderedReady");
            assertThat(sts.getSpec().getUpdateStrategy().getType()).isEqualTo("RollingUpdate");
            assertThat(c.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/ready");
            assertThat(c.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/health");

            Service headless =
                    client.services().inNamespace(NS).withName("idx-peers").get();
            assertThat(headless)
                    .as("the headless Service (made after the StatefulSet)")
                    .isNotNull();
            assertThat(headless.getSpec().getClusterIP()).isEqualTo("None");
            assertThat(headless.getMetadata().getOwnerReferences()).hasSize(1);
            Service svc = client.services().inNamespace(NS).withName("idx").get();
            assertThat(svc).as("the client Service").isNotNull();
            assertThat(svc.getSpec().getPorts().getFirst().getPort()).isEqualTo(8090);
            PodDisruptionBudget pdb = client.policy()
                    .v1()
                    .podDisruptionBudget()
                    .inNamespace(NS)
                    .withName("idx")
                    .get();
            assertThat(pdb).as("the PodDisruptionBudget").isNotNull();
            assertThat(pdb.getSpec().getMaxUnavailable().getIntVal()).isEqualTo(1);
            assertThat(pdb.getMetadata().getOwnerReferences()).hasSize(1);
        });
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            KvIndexer kvi = harness.kvIndexer(NS, "idx");
            assertThat(kvi.getStatus()).isNotNull();
            assertThat(kvi.getStatus().ready()).isEqualTo("0/2");
            assertThat(kvi.getStatus().pods()).extracting(r -> r.pod()).containsExactly("idx-0", "idx-1");
            assertThat(kvi.getStatus().replicas()).as("replica pods that exist").isZero();
            assertThat(kvi.getStatus().selector())
                    .isEqualTo("app.kubernetes.io/name=kv-indexer,app.kubernetes.io/instance=idx");
            assertThat(condition(kvi, "Ready").getStatus()).isEqualTo("False");
            assertThat(condition(kvi, "Progressing").getStatus()).isEqualTo("True");
            assertThat(condition(kvi, "Ready").getObservedGeneration())
                    .isEqualTo(kvi.getMetadata().getGeneration());
        });
    }

    @Test
    void scalingToOneReplicaRemovesThePdbAndUpdatesTheStatefulSet() {
        harness.create(Resources.kvIndexer(NS, "scale", 2, 8091));
        // the workflow writes its dependents in parallel: wait for both before scaling
        await().atMost(Duration.ofSeconds(30))
                .until(() -> client.policy()
                                        .v1()
                                        .podDisruptionBudget()
                                        .inNamespace(NS)
                                        .withName("scale")
                                        .get()
                                != null
                        && client.apps()
                                        .statefulSets()
                                        .inNamespace(NS)
                                        .withName("scale")
                                        .get()
                                != null);

        harness.mergePatch(KvIndexer.class, NS, "scale", "{\"spec\":{\"replicas\":1}}");
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertThat(client.apps()
                            .statefulSets()
                            .inNamespace(NS)
                            .withName("scale")
                            .get()
                            .getSpec()
                            .getReplicas())
                    .isEqualTo(1);
            assertThat(client.policy()
                            .v1()
                            .podDisruptionBudget()
                            .inNamespace(NS)
                            .withName("scale")
                            .get())
                    .isNull();
            assertThat(harness.kvIndexer(NS, "scale").getStatus().ready()).isEqualTo("0/1");
        });
    }

    /**
     * A larger {@code spec.persistence.size} grows the replicas' claims (the StatefulSet's claim template cannot change;
     * Kubernetes grows a claim's volume where its StorageClass allows expansion), and is then applied: no condition
     * says otherwise. One smaller than the template is reported (a volume cannot shrink) and the claims stay.
     */
    @Test
    void aLargerPersistenceSizeGrowsTheReplicasClaims() {
        KvIndexer kvi = Resources.kvIndexer(NS, "grow", 2, 8092);
        kvi.getSpec().setPersistence(new Persistence(new Quantity("1Gi"), null, null));
        harness.create(kvi);
        await().atMost(Duration.ofSeconds(30)).until(() -> harness.statefulSet(NS, "grow") != null);
        // what the StatefulSet controller makes from the template: a claim per replica
        for (int ordinal = 0; ordinal < 2; ordinal++) {
            client.persistentVolumeClaims()
                    .inNamespace(NS)
                    .resource(new PersistentVolumeClaimBuilder()
                            .withNewMetadata()
                            .withName("state-grow-" + ordinal)
                            .withNamespace(NS)
                            .endMetadata()
                            .withNewSpec()
                            .withAccessModes("ReadWriteOnce")
                            .withNewResources()
                            .withRequests(Map.of("storage", new Quantity("1Gi")))
                            .endResources()
                            .endSpec()
                            .build())
                    .create();
        }

        harness.mergePatch(KvIndexer.class, NS, "grow", "{\"spec\":{\"persistence\":{\"size\":\"3Gi\"}}}");
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            for (int ordinal = 0; ordinal < 2; ordinal++) {
                assertThat(claimSize("state-grow-" + ordinal)).isEqualTo(new Quantity("3Gi"));
            }
            assertThat(harness.kvIndexer(NS, "grow").getStatus().conditions())
                    .extracting(c -> String.valueOf(c.getMessage()))
                    .noneMatch(m -> m.contains("spec.persistence"));
        });
        assertThat(harness.statefulSet(NS, "grow")
                        .getSpec()
                        .getVolumeClaimTemplates()
                        .getFirst()
                        .getSpec()
                        .getResources()
                        .getRequests()
                        .get("storage"))
                .as("the template cannot change")
                .isEqualTo(new Quantity("1Gi"));

        harness.mergePatch(KvIndexer.class, NS, "grow", "{\"spec\":{\"persistence\":{\"size\":\"512Mi\"}}}");
        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> assertThat(
                                harness.kvIndexer(NS, "grow").getStatus().conditions())
                        .extracting(c -> String.valueOf(c.getMessage()))
                        .anyMatch(m -> m.contains("a volume cannot shrink")));
        assertThat(claimSize("state-grow-0")).isEqualTo(new Quantity("3Gi"));
    }

    private static Quantity claimSize(String name) {
        return client.persistentVolumeClaims()
                .inNamespace(NS)
                .withName(name)
                .get()
                .getSpec()
                .getResources()
                .getRequests()
                .get("storage");
    }

    @Test
    void aBadSpecIsReportedInTheStatusWithoutCreatingAnything() {
        KvIndexer bad = Resources.kvIndexer(NS, "bad", 2, 70000);
        harness.create(bad);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            KvIndexer kvi = harness.kvIndexer(NS, "bad");
            assertThat(kvi.getStatus()).isNotNull();
            Condition ready = condition(kvi, "Ready");
            assertThat(ready.getStatus()).isEqualTo("False");
            assertThat(ready.getReason()).isEqualTo("InvalidSpec");
            assertThat(ready.getMessage()).contains("spec.port").contains("70000");
        });
        assertThat(harness.statefulSet(NS, "bad")).isNull();
    }

    /**
     * KvIndexer {@code x-peers} needs the Service {@code x-peers} that is KvIndexer {@code x}'s headless Service: the
     * one that came second is refused, names the other and writes nothing (its StatefulSet would govern its pods by,
     * and its replicas recover through, a Service selecting the other's pods), whichever order they come in; the
     * first keeps its objects and its status. Once the first is gone (with its Services) the second gets its own.
     */
    @Test
    void aKvIndexerWhoseServiceIsAnothersIsRefusedAndLeavesItAlone() {
        harness.create(Resources.kvIndexer(NS, "col", 1, 8093));
        await().atMost(Duration.ofSeconds(30))
                .until(() ->
                        client.services().inNamespace(NS).withName("col-peers").get() != null);
        harness.create(Resources.kvIndexer(NS, "col-peers", 1, 8093));
        harness.create(Resources.kvIndexer(NS, "rev-peers", 1, 8093));
        await().atMost(Duration.ofSeconds(30))
                .until(() ->
                        client.services().inNamespace(NS).withName("rev-peers").get() != null);
        harness.create(Resources.kvIndexer(NS, "rev", 1, 8093));

        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() -> {
            assertRefused("col-peers", "Service col-peers is the headless (peer DNS) Service of KvIndexer col");
            assertRefused("rev", "Service rev-peers is the client Service of KvIndexer rev-peers");
        });
        assertThat(harness.statefulSet(NS, "col-peers")).isNull();
        assertThat(harness.statefulSet(NS, "rev")).isNull();
        for (String[] owned : new String[][] {{"col-peers", "col"}, {"rev-peers", "rev-peers"}}) {
            Service service =
                    client.services().inNamespace(NS).withName(owned[0]).get();
            assertThat(service.getMetadata().getOwnerReferences())
                    .singleElement()
                    .satisfies(o -> assertThat(o.getName()).isEqualTo(owned[1]));
            assertThat(service.getSpec().getSelector()).containsEntry("app.kubernetes.io/instance", owned[1]);
            assertThat(condition(harness.kvIndexer(NS, owned[1]), "Ready").getReason())
                    .isEqualTo("ReplicasNotReady");
        }

        // what the garbage collector does after the delete (the mock has none)
        client.resources(KvIndexer.class).inNamespace(NS).withName("col").delete();
        client.services().inNamespace(NS).withName("col").delete();
        client.services().inNamespace(NS).withName("col-peers").delete();
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() -> {
            assertThat(harness.statefulSet(NS, "col-peers")).isNotNull();
            assertThat(client.services().inNamespace(NS).withName("col-peers").get())
                    .satisfies(s -> assertThat(s.getSpec().getSelector())
                            .containsEntry("app.kubernetes.io/instance", "col-peers"));
            assertThat(condition(harness.kvIndexer(NS, "col-peers"), "Ready").getReason())
                    .isEqualTo("ReplicasNotReady");
        });
    }

    /**
     * A Secret of the KvIndexer's names that a user made (their certificate, or anything named so) was overwritten with
     * the operator's certificate: the KvIndexer is refused instead, naming it, and writes nothing, until it is gone.
     */
    @Test
    void aSecretOfItsNameThatIsNotItsOwnIsNeverOverwritten() {
        Secret users = client.secrets()
                .inNamespace(NS)
                .resource(new SecretBuilder()
                        .withNewMetadata()
                        .withName("own-tls")
                        .withNamespace(NS)
                        .endMetadata()
                        .withStringData(Map.of("tls.crt", "the user's"))
                        .build())
                .create();
        harness.create(Resources.kvIndexer(NS, "own", 1, 8095));
        await().atMost(Duration.ofSeconds(30))
                .ignoreExceptions()
                .untilAsserted(() -> assertRefused(
                        "own",
                        "Secret own-tls, which this KvIndexer's certificate Secret would be, exists and belongs to no"
                                + " KvIndexer; the operator does not overwrite it: delete it"));
        assertThat(client.secrets().inNamespace(NS).withName("own-tls").get().getData())
                .isEqualTo(users.getData());
        assertThat(client.secrets().inNamespace(NS).withName("own-auth").get()).isNull();
        assertThat(harness.statefulSet(NS, "own")).isNull();

        client.secrets().inNamespace(NS).withName("own-tls").delete();
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() -> {
            assertThat(harness.statefulSet(NS, "own")).isNotNull();
            assertThat(client.secrets()
                            .inNamespace(NS)
                            .withName("own-tls")
                            .get()
                            .getData())
                    .containsKeys("tls.crt", "tls.key", "ca.crt");
        });
    }

    private void assertRefused(String name, String why) {
        Condition ready = condition(harness.kvIndexer(NS, name), "Ready");
        assertThat(ready.getReason()).isEqualTo("InvalidSpec");
        assertThat(ready.getMessage()).contains(why).endsWith("create this KvIndexer again under another name");
    }

    /**
     * What is taken out of {@code spec.podTemplate} or {@code spec.resources} goes from the StatefulSet's pod template
     * (the generic matcher takes what the actual template has beyond the desired one for API-server defaults and kept
     * it), and a template as desired is not written again at every reconcile.
     */
    @Test
    void whatIsTakenOutOfThePodTemplateOverridesLeavesTheStatefulSet() throws InterruptedException {
        KvIndexer kvi = Resources.kvIndexer(NS, "rm", 1, 8094);
        kvi.getSpec()
                .setPodTemplate(new PodTemplateOverrides(
                        Map.of("team", "a"),
                        null,
                        Map.of("disk", "ssd"),
                        List.of(new TolerationBuilder()
                                .withKey("gpu")
                                .withOperator("Exists")
                                .build()),
                        null,
                        null,
                        null,
                        List.of(new EnvVar("DYN_LOG", "warn", null)),
                        null));
        kvi.getSpec()
                .setResources(new ResourceRequirementsBuilder()
                        .withLimits(Map.of("memory", new Quantity("2Gi")))
                        .build());
        harness.create(kvi);
        await().atMost(Duration.ofSeconds(30)).until(() -> harness.statefulSet(NS, "rm") != null);
        String written = harness.statefulSet(NS, "rm").getMetadata().getResourceVersion();
        harness.throughout(
                Duration.ofMillis(2500),
                "KvIndexer",
                2,
                () -> assertThat(harness.statefulSet(NS, "rm").getMetadata().getResourceVersion())
                        .as("the StatefulSet, rewritten though nothing changed")
                        .isEqualTo(written));

        harness.mergePatch(KvIndexer.class, NS, "rm", "{\"spec\":{\"podTemplate\":null,\"resources\":null}}");

        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            PodTemplateSpec template = harness.statefulSet(NS, "rm").getSpec().getTemplate();
            assertThat(template.getMetadata().getLabels()).as("labels").doesNotContainKey("team");
            assertThat(template.getSpec().getNodeSelector()).as("nodeSelector").isNullOrEmpty();
            assertThat(template.getSpec().getTolerations()).as("tolerations").isNullOrEmpty();
            Container c = template.getSpec().getContainers().getFirst();
            assertThat(c.getEnv()).as("env").extracting(EnvVar::getName).doesNotContain("DYN_LOG");
            assertThat(c.getResources() == null ? null : c.getResources().getLimits())
                    .as("limits")
                    .isNullOrEmpty();
        });
    }

    @Test
    void anOptionalServiceMonitorComesAndGoesWithTheSpec() throws Exception {
        KvIndexer kvi = Resources.kvIndexer(NS, "mon", 1, 8092);
        kvi.getSpec().setServiceMonitor(true);
        harness.create(kvi);
        // no Prometheus Operator yet: the dependent is not activated, the status says why
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() -> {
            Condition degraded = condition(harness.kvIndexer(NS, "mon"), "Degraded");
            assertThat(degraded.getStatus()).isEqualTo("True");
            assertThat(degraded.getMessage()).contains("ServiceMonitor CRD is not installed");
        });

        installServiceMonitorCrd(client);
        var monitors =
                client.genericKubernetesResources(ServiceMonitors.CONTEXT).inNamespace(NS);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            var monitor = monitors.withName("mon").get();
            assertThat(monitor).isNotNull();
            assertThat(monitor.getMetadata().getOwnerReferences())
                    .singleElement()
                    .satisfies(o -> assertThat(o.getName()).isEqualTo("mon"));
            assertThat(monitor.get("spec", "selector", "matchLabels").toString())
                    .contains("kvindexer.io/service=client");
            assertThat(condition(harness.kvIndexer(NS, "mon"), "Degraded").getStatus())
                    .isEqualTo("False");
        });
        // TLS and auth on (the defaults): HTTPS, checked against the CA of mon-tls under a name the certificate holds
        Map<String, Object> endpoint = endpoint(monitors.withName("mon").get());
        assertThat(endpoint)
                .containsEntry("scheme", "https")
                .containsEntry("path", "/metrics")
                .doesNotContainKeys("bearerTokenSecret", "authorization"); // /metrics is open
        assertThat(endpoint.get("tlsConfig"))
                .isEqualTo(Map.of(
                        "ca",
                        Map.of("secret", Map.of("name", "mon-tls", "key", "ca.crt")),
                        "serverName",
                        "mon." + NS + ".svc"));
        Secret tls = client.secrets().inNamespace(NS).withName("mon-tls").get();
        X509Certificate cert = PemFormat.certificates(ReplicaAccesses.value(tls, IndexerSecurity.CERT_KEY))
                .getFirst();
        assertThat(cert.getSubjectAlternativeNames().stream().map(n -> String.valueOf(n.get(1))))
                .contains("mon." + NS + ".svc");

        harness.mergePatch(KvIndexer.class, NS, "mon", "{\"spec\":{\"security\":{\"tls\":{\"enabled\":false}}}}");
        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(
                        () -> assertThat(endpoint(monitors.withName("mon").get()))
                                .containsEntry("scheme", "http")
                                .doesNotContainKey("tlsConfig"));
        harness.mergePatch(KvIndexer.class, NS, "mon", "{\"spec\":{\"serviceMonitor\":false}}");
        await().atMost(Duration.ofSeconds(30))
                .until(() -> monitors.withName("mon").get() == null);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> endpoint(GenericKubernetesResource monitor) {
        List<Map<String, Object>> endpoints = monitor.get("spec", "endpoints");
        assertThat(endpoints).hasSize(1);
        return endpoints.getFirst();
    }

    /** What installing the Prometheus Operator adds to the API: the ServiceMonitor type (the mock serves discovery). */
    static void installServiceMonitorCrd(KubernetesClient client) {
        client.apiextensions()
                .v1()
                .customResourceDefinitions()
                .resource(new CustomResourceDefinitionBuilder()
                        .withNewMetadata()
                        .withName(ServiceMonitors.PLURAL + "." + ServiceMonitors.GROUP)
                        .endMetadata()
                        .withNewSpec()
                        .withGroup(ServiceMonitors.GROUP)
                        .withScope("Namespaced")
                        .withNewNames()
                        .withKind(ServiceMonitors.KIND)
                        .withPlural(ServiceMonitors.PLURAL)
                        .withSingular("servicemonitor")
                        .endNames()
                        .addNewVersion()
                        .withName(ServiceMonitors.VERSION)
                        .withServed(true)
                        .withStorage(true)
                        .withNewSchema()
                        .withNewOpenAPIV3Schema()
                        .withType("object")
                        .withXKubernetesPreserveUnknownFields(true)
                        .endOpenAPIV3Schema()
                        .endSchema()
                        .endVersion()
                        .endSpec()
                        .build())
                .create();
    }

    static Condition condition(KvIndexer kvi, String type) {
        return kvi.getStatus().conditions().stream()
                .filter(c -> type.equals(c.getType()))
                .findFirst()
                .orElseThrow();
    }
}

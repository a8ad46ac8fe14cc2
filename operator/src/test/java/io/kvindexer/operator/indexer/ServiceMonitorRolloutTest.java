package io.kvindexer.operator.indexer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.common.IndexerSecurity;
import io.kvindexer.operator.common.ServedAs;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A change of TLS rolls the replicas one at a time, so for a while some pods serve HTTPS and some plain HTTP: the
 * ServiceMonitor the operator writes must have Prometheus scrape each pod in the scheme that pod serves. Checked on
 * the resource in the mock API server by doing what Prometheus does with it: for each pod, the endpoints whose
 * relabelings keep it (from the pod's labels, as Kubernetes service discovery presents them), and their scheme.
 */
@EnableKubernetesMockClient(crud = true)
class ServiceMonitorRolloutTest {
    static KubernetesClient client;
    private static final String NS = "monitor-rollout";
    private static OperatorHarness harness;

    @BeforeAll
    static void start() {
        KvIndexerOperatorTest.installServiceMonitorCrd(client);
        harness = new OperatorHarness(client, Duration.ofSeconds(2));
    }

    @AfterAll
    static void stop() {
        harness.close();
    }

    @Test
    void everyPodIsScrapedInTheSchemeItServesWhileTlsRolls() {
        KvIndexer kvi = Resources.kvIndexer(NS, "mon", 2, 8093);
        kvi.getSpec().setServiceMonitor(true);
        harness.create(kvi);
        await().atMost(OperatorHarness.WAIT).until(() -> harness.statefulSet(NS, "mon") != null);
        podFromTemplate(kvi, 0);
        podFromTemplate(kvi, 1);
        await().atMost(OperatorHarness.WAIT)
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(scrapedAs()).isEqualTo(Map.of("mon-0", "https", "mon-1", "https")));

        // TLS off: the StatefulSet restarts replica 1 with the new template first; replica 0 still serves HTTPS
        harness.mergePatch(KvIndexer.class, NS, "mon", "{\"spec\":{\"security\":{\"tls\":{\"enabled\":false}}}}");
        await().atMost(OperatorHarness.WAIT)
                .until(() -> !harness.indexerContainer(NS, "mon").getArgs().contains(IndexerSecurity.TLS_CERT_FLAG));
        podFromTemplate(kvi, 1);
        await().atMost(OperatorHarness.WAIT)
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(scrapedAs()).isEqualTo(Map.of("mon-0", "https", "mon-1", "http")));

        // the rollout ends: plain HTTP for both, and the HTTPS endpoint (and its CA Secret reference) goes
        podFromTemplate(kvi, 0);
        await().atMost(OperatorHarness.WAIT).ignoreExceptions().untilAsserted(() -> {
            assertThat(scrapedAs()).isEqualTo(Map.of("mon-0", "http", "mon-1", "http"));
            assertThat(endpoints(monitor())).hasSize(1);
        });
    }

    /** Each replica pod → the scheme of the one endpoint that scrapes it; fails if none or several keep it. */
    private static Map<String, String> scrapedAs() {
        List<Map<String, Object>> endpoints = endpoints(monitor());
        return client.pods().inNamespace(NS).list().getItems().stream()
                .collect(Collectors.toMap(p -> p.getMetadata().getName(), p -> {
                    List<String> schemes = endpoints.stream()
                            .filter(e -> keeps(e, p))
                            .map(e -> (String) e.get("scheme"))
                            .toList();
                    assertThat(schemes)
                            .as("endpoints scraping " + p.getMetadata().getName())
                            .hasSize(1);
                    // the scheme it is scraped in is the one its own spec serves
                    assertThat(schemes.getFirst()).isEqualTo(ServedAs.of(p).scheme());
                    return schemes.getFirst();
                }));
    }

    /**
     * Whether Prometheus keeps {@code pod} as a target of {@code endpoint}: every {@code keep} relabeling's regex
     * (anchored) matches its source labels' values joined by {@code ;}, a missing label being empty.
     */
    @SuppressWarnings("unchecked")
    private static boolean keeps(Map<String, Object> endpoint, Pod pod) {
        Map<String, String> meta = pod.getMetadata().getLabels().entrySet().stream()
                .collect(Collectors.toMap(
                        e -> "__meta_kubernetes_pod_label_" + e.getKey().replaceAll("[^a-zA-Z0-9_]", "_"),
                        Map.Entry::getValue));
        List<Map<String, Object>> relabelings =
                (List<Map<String, Object>>) endpoint.getOrDefault("relabelings", List.of());
        for (Map<String, Object> r : relabelings) {
            String value = ((List<String>) r.get("sourceLabels"))
                    .stream().map(l -> meta.getOrDefault(l, "")).collect(Collectors.joining(";"));
            boolean matches = value.matches((String) r.getOrDefault("regex", "(.*)"));
            if ("keep".equalsIgnoreCase((String) r.get("action")) && !matches) {
                return false;
            }
            if ("drop".equalsIgnoreCase((String) r.get("action")) && matches) {
                return false;
            }
        }
        return true;
    }

    private static GenericKubernetesResource monitor() {
        return client.genericKubernetesResources(ServiceMonitors.CONTEXT)
                .inNamespace(NS)
                .withName("mon")
                .get();
    }

    private static List<Map<String, Object>> endpoints(GenericKubernetesResource monitor) {
        return monitor.get("spec", "endpoints");
    }

    /** Plays the StatefulSet controller: replica {@code ordinal} (re)made from the current pod template. */
    private static void podFromTemplate(KvIndexer kvi, int ordinal) {
        PodTemplateSpec template = harness.statefulSet(NS, "mon").getSpec().getTemplate();
        String name = IndexerNames.pod(kvi, ordinal);
        client.pods().inNamespace(NS).withName(name).delete();
        await().atMost(OperatorHarness.WAIT)
                .until(() -> client.pods().inNamespace(NS).withName(name).get() == null);
        Pod pod = OperatorHarness.pod(
                new ObjectMetaBuilder()
                        .withName(name)
                        .withNamespace(NS)
                        .withLabels(template.getMetadata().getLabels())
                        .build(),
                "127.0.0." + (40 + ordinal),
                false);
        pod.setSpec(template.getSpec());
        client.pods().inNamespace(NS).resource(pod).create();
    }
}

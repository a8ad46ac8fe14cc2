package io.kvindexer.operator.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** /healthz, /readyz and /metrics of a running operator. */
@EnableKubernetesMockClient(crud = true)
class ProbeServerTest {
    static KubernetesClient client;
    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> get(ProbeServer s, String path) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + path))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void probesFollowTheOperatorAndMetricsCountReconciles() throws Exception {
        try (ProbeServer notStarted = new ProbeServer(
                new InetSocketAddress("127.0.0.1", 0),
                () -> null,
                new io.prometheus.metrics.model.registry.PrometheusRegistry())) {
            assertThat(get(notStarted, "/readyz").statusCode()).isEqualTo(503);
            assertThat(get(notStarted, "/healthz").statusCode()).isEqualTo(503);
        }
        try (OperatorHarness harness = new OperatorHarness(client, Duration.ofSeconds(5));
                ProbeServer probes = new ProbeServer(
                        new InetSocketAddress("127.0.0.1", 0),
                        () -> harness.operator().getRuntimeInfo(),
                        harness.registry())) {
            assertThat(get(probes, "/readyz").statusCode()).isEqualTo(200);
            assertThat(get(probes, "/healthz").statusCode()).isEqualTo(200);
            assertThat(http.send(
                                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + probes.port() + "/readyz"))
                                            .POST(HttpRequest.BodyPublishers.noBody())
                                            .build(),
                                    HttpResponse.BodyHandlers.ofString())
                            .statusCode())
                    .isEqualTo(405);

            client.resources(KvIndexer.class)
                    .inNamespace("probes")
                    .resource(Resources.kvIndexer("probes", "kv", 1, 8090))
                    .create();
            await().atMost(Duration.ofSeconds(30))
                    .untilAsserted(() -> assertThat(get(probes, "/metrics").body())
                            .contains("kvindexer_operator_reconciliations_total{kind=\"KvIndexer\"}")
                            .contains("kvindexer_operator_registrations_total{action=\"registered\"} 0.0")
                            .contains("kvindexer_operator_reconcile_errors_total{controller=\"kvworker\"} 0.0"));
        }
    }
}

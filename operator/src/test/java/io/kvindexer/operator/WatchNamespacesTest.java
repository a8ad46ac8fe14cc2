package io.kvindexer.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * WATCH_NAMESPACES restricts both controllers and every informer they own: resources in a watched namespace are
 * reconciled, the same resources in another namespace are never touched, and no informer lists or watches
 * cluster-wide.
 */
@EnableKubernetesMockClient(crud = true)
class WatchNamespacesTest {
    static KubernetesClient client;
    static KubernetesMockServer server;
    private static final String WATCHED = "team-a";
    private static final String ALSO_WATCHED = "team-b";
    private static final String OTHER = "team-z";

    @Test
    void onlyTheWatchedNamespacesAreReconciled() throws InterruptedException {
        OperatorSettings settings = OperatorSettings.defaults()
                .withResync(Duration.ofSeconds(2))
                .withWatchNamespaces(OperatorSettings.parseWatchNamespaces(WATCHED + "," + ALSO_WATCHED));
        try (OperatorHarness harness = new OperatorHarness(client, settings)) {
            // the unwatched ones first, so they have every chance to be picked up before the barrier
            harness.create(Resources.kvIndexer(OTHER, "idx", 1, 8090));
            harness.create(Resources.kvWorker(OTHER, "w", "idx", Map.of("app", "engine"), "m", 16, 5557, null, 1));
            harness.create(Resources.kvIndexer(WATCHED, "idx", 1, 8090));
            harness.create(
                    Resources.kvWorker(WATCHED, "w", "missing", Map.of("app", "engine"), "m", 16, 5557, null, 1));

            // barrier: both controllers have reconciled in the watched namespace
            await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
                assertThat(harness.statefulSet(WATCHED, "idx")).isNotNull();
                assertThat(harness.kvIndexer(WATCHED, "idx").getStatus()).isNotNull();
                KvWorker w = harness.kvWorker(WATCHED, "w");
                assertThat(w.getStatus()).isNotNull();
                assertThat(w.getMetadata().getFinalizers()).isNotEmpty();
            });
            // ... and within a bounded window after it, nothing happens in the unwatched namespace
            await().during(Duration.ofSeconds(4)).atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                assertThat(client.apps()
                                .statefulSets()
                                .inNamespace(OTHER)
                                .list()
                                .getItems())
                        .isEmpty();
                assertThat(client.services().inNamespace(OTHER).list().getItems())
                        .isEmpty();
                assertThat(harness.kvIndexer(OTHER, "idx").getStatus()).isNull();
                KvWorker w = harness.kvWorker(OTHER, "w");
                assertThat(w.getStatus()).isNull();
                assertThat(w.getMetadata().getFinalizers()).isNullOrEmpty();
            });
        }

        List<String> watches = new ArrayList<>();
        RecordedRequest r;
        while ((r = server.takeRequest(1, TimeUnit.MILLISECONDS)) != null) {
            if (r.getPath().contains("watch=true")) {
                watches.add(r.getPath());
            }
        }
        // KvIndexer, KvWorker, the two indexer-pod informers, engine pods, the KvWorker's KvIndexer informer and the
        // dependents' informers: all of them, per watched namespace, and none outside
        assertThat(watches)
                .as("watch requests")
                .isNotEmpty()
                .allSatisfy(path -> assertThat(path)
                        .containsAnyOf("/namespaces/" + WATCHED + "/", "/namespaces/" + ALSO_WATCHED + "/"));
        for (String ns : List.of(WATCHED, ALSO_WATCHED)) {
            for (String resource : List.of("/kvindexers?", "/kvworkers?", "/pods?", "/statefulsets?", "/services?")) {
                assertThat(watches)
                        .as("a watch of %s in %s", resource, ns)
                        .anyMatch(p -> p.contains("/namespaces/" + ns + resource));
            }
        }
    }

    @Test
    void parsesTheChartsFormat() {
        assertThat(OperatorSettings.parseWatchNamespaces(null)).isEmpty();
        assertThat(OperatorSettings.parseWatchNamespaces("")).isEmpty();
        assertThat(OperatorSettings.parseWatchNamespaces(" , ")).isEmpty();
        assertThat(OperatorSettings.parseWatchNamespaces("team-a")).containsExactly("team-a");
        assertThat(OperatorSettings.parseWatchNamespaces("team-a, team-b,,team-a"))
                .isEqualTo(Set.of("team-a", "team-b"));
        assertThatIllegalArgumentException()
                .isThrownBy(() -> OperatorSettings.parseWatchNamespaces("team-a,Team_B"))
                .withMessageContaining("WATCH_NAMESPACES")
                .withMessageContaining("Team_B");
    }
}

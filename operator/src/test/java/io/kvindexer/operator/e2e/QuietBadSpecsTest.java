package io.kvindexer.operator.e2e;

import static io.kvindexer.operator.support.OperatorHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Specs the schema would reject (the mock API server has no schema) and references to nothing: each gets a condition
 * a user can act on, and none sets off a reconcile loop: over a quiet period the operator reconciles about once per
 * resync and resource, no more.
 */
class QuietBadSpecsTest {
    private static final Duration RESYNC = Duration.ofSeconds(1);

    @RegisterExtension
    static final OperatorHarness harness = OperatorHarness.onMockApiServer(RESYNC);

    private static final String NS = "quiet";

    private static double reconciliations() {
        return harness.registry().scrape().stream()
                .filter(s -> s.getMetadata().getName().equals("kvindexer_operator_reconciliations"))
                .flatMap(s -> ((CounterSnapshot) s).getDataPoints().stream())
                .mapToDouble(CounterSnapshot.CounterDataPointSnapshot::getValue)
                .sum();
    }

    private static Condition ready(KvWorker w) {
        return Resources.condition(w.getStatus().conditions(), "Ready");
    }

    @Test
    void badSpecsAreReportedAndReconciledOncePerResync() throws Exception {
        KvIndexer badIndexer = Resources.kvIndexer(NS, "kv-bad", 1, 18999);
        badIndexer.getSpec().setReplicas(-2);
        harness.create(badIndexer);
        harness.create(Resources.kvIndexer(NS, "kv", 1, 18998)); // no replica pod ever starts
        KvWorker negative = Resources.kvWorker(NS, "negative", "kv", Map.of("app", "x"), "m", 16, 5557, null, 1);
        negative.getSpec().setDataParallelSize(-1);
        harness.create(negative);
        KvWorker ports = Resources.kvWorker(NS, "ports", "kv", Map.of("app", "x"), "m", 16, 65535, null, 4);
        harness.create(ports);
        // a name the indexer refuses (a CRD applied before the schema bounded it): InvalidSpec, not a 422 per replica
        harness.create(
                Resources.kvWorker(NS, "long-model", "kv", Map.of("app", "x"), "m".repeat(300), 16, 5557, null, 1));
        harness.create(Resources.kvWorker(NS, "orphan", "nowhere", Map.of("app", "x"), "m", 16, 5557, null, 1));
        harness.create(Resources.kvWorker(NS, "waiting", "kv", Map.of("app", "x"), "m", 16, 5557, null, 1));

        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            assertThat(Resources.condition(
                                    harness.kvIndexer(NS, "kv-bad").getStatus().conditions(), "Ready")
                            .getMessage())
                    .contains("spec.replicas");
            assertThat(ready(harness.kvWorker(NS, "negative")).getMessage()).contains("spec.dataParallelSize");
            assertThat(ready(harness.kvWorker(NS, "ports")).getMessage()).contains("spec.zmqPort");
            assertThat(ready(harness.kvWorker(NS, "long-model")))
                    .extracting(Condition::getReason, Condition::getMessage)
                    .containsExactly("InvalidSpec", "spec.modelName must be at most 256 characters, got 300");
            assertThat(ready(harness.kvWorker(NS, "orphan")))
                    .extracting(Condition::getReason, Condition::getMessage)
                    .containsExactly("IndexerNotFound", "KvIndexer nowhere not found in namespace " + NS);
            assertThat(ready(harness.kvWorker(NS, "waiting")).getReason()).isEqualTo("NoReadyReplicas");
        });

        int resources = 2 + 5;
        Duration quiet = RESYNC.multipliedBy(5); // the budget below counts in resync periods
        double before = reconciliations();
        Thread.sleep(quiet.toMillis());
        double during = reconciliations() - before;
        long budget = resources * (quiet.toMillis() / RESYNC.toMillis() + 2);
        assertThat(during)
                .as("reconciliations of %d resources in %s with a %s resync", resources, quiet, RESYNC)
                .isLessThanOrEqualTo(budget)
                .as("the periodic resync goes on for every resource")
                .isGreaterThanOrEqualTo(resources);
        for (String name : List.of("negative", "ports", "long-model", "orphan", "waiting")) {
            assertThat(ready(harness.kvWorker(NS, name)).getObservedGeneration())
                    .isEqualTo(1L);
        }
        harness.deleteKvWorkers(NS, WAIT);
    }
}

package io.kvindexer.operator.indexer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRule;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A KvWorker moved to another KvIndexer (its {@code spec.indexerRef} changed) leaves the NetworkPolicy of the one it
 * named before at once, not at that one's next resync: JOSDK maps the KvWorker's new state only.
 */
class FormerIndexerRefTest {
    /** Far longer than the awaits: only the KvWorker's event can bring the change. */
    @RegisterExtension
    static final OperatorHarness harness = OperatorHarness.onMockApiServer(Duration.ofMinutes(5));

    private static final String NS = "moved";
    private static final Duration SOON = Duration.ofSeconds(10);

    @Test
    void aMovedKvWorkersEnginesLeaveTheFormerKvIndexersEgressAtOnce() throws InterruptedException {
        harness.create(Resources.kvIndexer(NS, "kv-a", 1, 8090));
        harness.create(Resources.kvIndexer(NS, "kv-b", 1, 8090));
        harness.create(Resources.kvWorker(NS, "vllm", "kv-a", Resources.VLLM, "llama", 16, 5557, null, 1));
        await().atMost(SOON).ignoreExceptions().untilAsserted(() -> {
            assertThat(engineRules("kv-a")).hasSize(1);
            assertThat(engineRules("kv-b")).isEmpty();
        });
        settled();

        harness.mergePatch(KvWorker.class, NS, "vllm", "{\"spec\":{\"indexerRef\":\"kv-b\"}}");

        await().atMost(SOON).ignoreExceptions().untilAsserted(() -> {
            assertThat(engineRules("kv-b")).hasSize(1);
            assertThat(engineRules("kv-a"))
                    .as("kv-a's egress to the moved engines")
                    .isEmpty();
        });
    }

    /**
     * Until no KvIndexer reconcile has started for a second: those the creations queued (their own objects' events)
     * are done, and none reads the KvWorkers again after the move by chance.
     */
    private static void settled() throws InterruptedException {
        long seen = harness.reconciliations("KvIndexer");
        long since = System.nanoTime();
        while (System.nanoTime() - since < Duration.ofSeconds(1).toNanos()) {
            Thread.sleep(100);
            long now = harness.reconciliations("KvIndexer");
            if (now != seen) {
                seen = now;
                since = System.nanoTime();
            }
        }
    }

    /** The egress rules to engine pods: those on port 5557 (the replicas' own rule is on 8090, DNS on 53). */
    private static List<NetworkPolicyEgressRule> engineRules(String indexer) {
        NetworkPolicy policy = harness.client()
                .network()
                .v1()
                .networkPolicies()
                .inNamespace(NS)
                .withName(indexer)
                .get();
        assertThat(policy).as("the NetworkPolicy of %s", indexer).isNotNull();
        return policy.getSpec().getEgress().stream()
                .filter(r -> r.getPorts().stream()
                        .anyMatch(p ->
                                p.getPort().getIntVal() != null && p.getPort().getIntVal() == 5557))
                .toList();
    }
}

package io.kvindexer.operator.indexer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRuleBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.crd.v1alpha1.NetworkPolicySettings;
import io.kvindexer.operator.support.Resources;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A KvWorker the operator refuses adds nothing to its KvIndexer's NetworkPolicy: values its schema lets through can
 * make a policy the API server refuses, and every write of the policy, so every reconcile of the KvIndexer (its peer
 * lists, its status), would fail for one bad KvWorker.
 */
class IndexerNetworkPolicyTest {
    private static final String NS = "llm";

    @Test
    void aKvWorkerTheOperatorRefusesOpensNoEgressAndBreaksNoPort() {
        KvWorker good = Resources.kvWorker(NS, "a-good", "kv", Map.of("app", "vllm"), "m", 16, 5557, 5600, 2);
        // within the schema (zmqPort <= 65535, dataParallelSize <= 1024): ranks up to port 65599
        KvWorker ranksPastTheLastPort =
                Resources.kvWorker(NS, "b-ranks", "kv", Map.of("app", "sglang"), "m", 16, 65000, null, 600);
        // the schema does not look into a selector: a value no label can have
        KvWorker badSelector =
                Resources.kvWorker(NS, "c-selector", "kv", Map.of("app", "vllm llama"), "m", 16, 5557, null, 1);
        KvWorker existsWithValues = Resources.kvWorker(NS, "d-exists", "kv", Map.of(), "m", 16, 5557, null, 1);
        existsWithValues
                .getSpec()
                .setSelector(new LabelSelectorBuilder()
                        .addNewMatchExpression()
                        .withKey("app")
                        .withOperator("Exists")
                        .withValues("trtllm")
                        .endMatchExpression()
                        .build());

        NetworkPolicy policy = IndexerNetworkPolicy.desired(
                Resources.kvIndexer(NS, "kv", 2, 8090),
                List.of(good, ranksPastTheLastPort, badSelector, existsWithValues),
                "kv-system");

        List<NetworkPolicyEgressRule> engines = policy.getSpec().getEgress().stream()
                .filter(r -> r.getTo().size() == 1
                        && r.getTo().getFirst().getPodSelector() != null
                        && r.getTo().getFirst().getPodSelector().getMatchLabels() != null
                        && !r.getTo()
                                .getFirst()
                                .getPodSelector()
                                .getMatchLabels()
                                .containsKey("app.kubernetes.io/instance"))
                .toList();
        assertThat(engines)
                .as("the egress rules to engine pods: the accepted KvWorker's only")
                .singleElement()
                .satisfies(r -> assertThat(r.getTo().getFirst().getPodSelector().getMatchLabels())
                        .isEqualTo(Map.of("app", "vllm")));
        assertThat(policy.getSpec().getEgress().stream().flatMap(r -> r.getPorts().stream()))
                .as("every port and port range within 1..65535")
                .allSatisfy(IndexerNetworkPolicyTest::inRange);
    }

    /**
     * The policy is matched exactly (what a generic matcher would keep, a rule or port taken away, goes), so the
     * desired one carries what the API server defaults: an {@code allowTo} port without a protocol is TCP. The
     * KvIndexer's own spec is not touched.
     */
    @Test
    void anAllowToPortWithoutAProtocolIsWrittenAsTheApiServerStoresIt() {
        KvIndexer kvi = Resources.kvIndexer(NS, "kv", 2, 8090);
        NetworkPolicyEgressRule collector = new NetworkPolicyEgressRuleBuilder()
                .addNewPort()
                .withPort(new IntOrString(4317))
                .endPort()
                .addNewPort()
                .withProtocol("UDP")
                .withPort(new IntOrString(4318))
                .endPort()
                .build();
        kvi.getSpec().setNetworkPolicy(new NetworkPolicySettings(null, null, List.of(collector)));

        NetworkPolicy policy = IndexerNetworkPolicy.desired(kvi, List.of(), "kv-system");

        assertThat(policy.getSpec().getEgress().getLast().getPorts())
                .extracting(NetworkPolicyPort::getProtocol, p -> p.getPort().getIntVal())
                .containsExactly(tuple("TCP", 4317), tuple("UDP", 4318));
        assertThat(collector.getPorts().getFirst().getProtocol()).isNull();
    }

    private static void inRange(NetworkPolicyPort p) {
        assertThat(p.getPort().getIntVal()).isBetween(1, 65535);
        if (p.getEndPort() != null) {
            assertThat(p.getEndPort()).isBetween(p.getPort().getIntVal(), 65535);
        }
    }
}

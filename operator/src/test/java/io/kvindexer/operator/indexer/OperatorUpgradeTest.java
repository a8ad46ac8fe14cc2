package io.kvindexer.operator.indexer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A new operator over the StatefulSet an older one made, on the CRUD mock: it changes the pod template only where
 * this version builds it differently (each such change rolls every replica once), keeps what cannot change
 * ({@code podManagementPolicy}), and then leaves the StatefulSet alone; one already as this version builds it is not
 * written at all, so an operator upgrade that changes no template restarts no replica.
 */
@EnableKubernetesMockClient(crud = true)
class OperatorUpgradeTest {
    static KubernetesClient client;
    private static final String NS = "kvi-upgrade";

    @BeforeAll
    static void crds() {
        OperatorHarness.installCrds(client);
    }

    @Test
    void aStatefulSetAsThisVersionBuildsItIsNotWritten() throws Exception {
        KvIndexer kvi = client.resource(Resources.kvIndexer(NS, "same", 2, 8090))
                .inNamespace(NS)
                .create();
        StatefulSet made = IndexerDesiredState.statefulSet(kvi);
        made.addOwnerReference(kvi);
        String version =
                client.resource(made).inNamespace(NS).create().getMetadata().getResourceVersion();

        try (OperatorHarness harness = new OperatorHarness(client, Duration.ofSeconds(1))) {
            // reconciled (a StatefulSet not taken for its own would have been created anew and failed on the name)
            await().atMost(OperatorHarness.WAIT)
                    .until(() -> harness.kvIndexer(NS, "same").getStatus() != null);
            harness.throughout(
                    Duration.ofSeconds(3),
                    "KvIndexer",
                    3,
                    () -> assertThat(harness.statefulSet(NS, "same")
                                    .getMetadata()
                                    .getResourceVersion())
                            .as("the StatefulSet is not written")
                            .isEqualTo(version));
        }
    }

    @Test
    void aStatefulSetAnOlderOperatorMadeGetsThisVersionsTemplateOnceAndKeepsItsPolicy() throws Exception {
        KvIndexer kvi = client.resource(Resources.kvIndexer(NS, "older", 2, 8090))
                .inNamespace(NS)
                .create();
        // what an operator from before the shutdown delay and the spread made: Parallel, neither in the template
        StatefulSet made = IndexerDesiredState.statefulSet(kvi, "Parallel", List.of());
        made.addOwnerReference(kvi);
        made.getSpec().getTemplate().getSpec().setTopologySpreadConstraints(null);
        Container container =
                made.getSpec().getTemplate().getSpec().getContainers().getFirst();
        List<String> args = new ArrayList<>(container.getArgs());
        int delay = args.indexOf("--shutdown-delay");
        assertThat(delay).as("this version passes --shutdown-delay").isNotNegative();
        args.subList(delay, delay + 2).clear();
        container.setArgs(args);
        client.resource(made).inNamespace(NS).create();

        try (OperatorHarness harness = new OperatorHarness(client, Duration.ofSeconds(1))) {
            await().atMost(OperatorHarness.WAIT).untilAsserted(() -> {
                StatefulSet sts = harness.statefulSet(NS, "older");
                var wanted = IndexerDesiredState.statefulSet(kvi)
                        .getSpec()
                        .getTemplate()
                        .getSpec();
                var template = sts.getSpec().getTemplate().getSpec();
                assertThat(template.getContainers().getFirst().getArgs())
                        .isEqualTo(wanted.getContainers().getFirst().getArgs());
                assertThat(template.getTopologySpreadConstraints()).isEqualTo(wanted.getTopologySpreadConstraints());
                assertThat(sts.getSpec().getPodManagementPolicy()).isEqualTo("Parallel");
            });
            String version = harness.statefulSet(NS, "older").getMetadata().getResourceVersion();
            harness.throughout(
                    Duration.ofSeconds(3),
                    "KvIndexer",
                    3,
                    () -> assertThat(harness.statefulSet(NS, "older")
                                    .getMetadata()
                                    .getResourceVersion())
                            .as("written once, then left alone")
                            .isEqualTo(version));
        }
    }
}

package io.kvindexer.operator.e2e;

import static io.kvindexer.operator.support.OperatorHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kvindexer.operator.crd.v1alpha1.CrdConstants;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Objects written against a newer CRD than this operator knows (the mock, like a server with a newer schema, keeps
 * every field): unknown spec fields at the top and nested, an unknown root field, and a status a newer or older
 * operator wrote in another shape. The operator reconciles both kinds with the fields it knows, says which it
 * ignored (Warning Event), and its informers stay healthy.
 */
class UnknownFieldsTest {
    @RegisterExtension
    static final OperatorHarness harness = OperatorHarness.onMockApiServer(Duration.ofSeconds(2));

    private static final String NS = "unknown-fields";

    private static GenericKubernetesResource raw(String json) {
        return Serialization.unmarshal(json, GenericKubernetesResource.class);
    }

    @Test
    void fieldsTheOperatorDoesNotKnowAreIgnoredWithAWarning() {
        var kvis = harness.client()
                .genericKubernetesResources(CrdConstants.API_VERSION, "KvIndexer")
                .inNamespace(NS);
        kvis.resource(raw("""
                {"apiVersion": "kvindexer.io/v1alpha1", "kind": "KvIndexer",
                 "metadata": {"name": "future", "namespace": "%s"},
                 "futureTopLevel": {"x": 1},
                 "spec": {"replicas": 2, "image": "ghcr.io/kv-indexer/kv-indexer:9.9.9", "port": 8095,
                          "futureTuning": {"mode": "fast"},
                          "podTemplate": {"labels": {"team": "a"}, "futureNested": true}}}
                """.formatted(NS))).create();
        // a status in the shape an older operator wrote (replicas was the list of replicas) plus a field from a newer
        // one
        kvis.withName("future").subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE), """
                {"status": {"replicas": [{"pod": "future-0", "url": "http://x", "ready": true}],
                            "futureStatus": "yes", "ready": "1/2"}}""");
        harness.client()
                .genericKubernetesResources(CrdConstants.API_VERSION, "KvWorker")
                .inNamespace(NS)
                .resource(raw("""
                {"apiVersion": "kvindexer.io/v1alpha1", "kind": "KvWorker",
                 "metadata": {"name": "future-engines", "namespace": "%s"},
                 "spec": {"indexerRef": "future", "selector": {"matchLabels": {"app": "vllm"}},
                          "modelName": "llama", "blockSize": 16, "futureKnob": 7}}
                """.formatted(NS)))
                .create();

        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            StatefulSet sts = harness.statefulSet(NS, "future");
            assertThat(sts.getSpec().getReplicas()).isEqualTo(2);
            assertThat(sts.getSpec().getTemplate().getMetadata().getLabels()).containsEntry("team", "a");
            KvIndexer kvi = harness.kvIndexer(NS, "future");
            assertThat(kvi.getStatus().replicas()).as("rewritten as a count").isZero();
            assertThat(kvi.getStatus().ready()).isEqualTo("0/2");
            KvWorker w = harness.kvWorker(NS, "future-engines");
            Condition ready = Resources.condition(w.getStatus().conditions(), "Ready");
            assertThat(ready.getReason()).isEqualTo("NoReadyReplicas");
        });
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(harness.client()
                                .v1()
                                .events()
                                .inNamespace(NS)
                                .list()
                                .getItems())
                        .filteredOn(e -> "UnknownFields".equals(e.getReason()))
                        .extracting(e -> e.getInvolvedObject().getKind() + ": " + e.getMessage())
                        .containsExactlyInAnyOrder(
                                "KvIndexer: spec fields not known to this operator version, ignored: futureTuning",
                                "KvWorker: spec fields not known to this operator version, ignored: futureKnob"));
        assertThat(harness.operator().getRuntimeInfo().allEventSourcesAreHealthy())
                .as("no informer stopped on the unknown fields")
                .isTrue();
        // the fields stay on the objects: the operator writes only status
        assertThat(kvis.withName("future").get().get("spec", "futureTuning").toString())
                .contains("fast");
    }
}

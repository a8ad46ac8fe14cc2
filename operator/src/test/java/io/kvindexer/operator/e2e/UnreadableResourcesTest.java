package io.kvindexer.operator.e2e;

import static io.kvindexer.operator.support.OperatorHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kvindexer.operator.crd.v1alpha1.CrdConstants;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Objects the operator cannot read (the mock, like a server whose CRD schema differs from the operator's, keeps them
 * as written): a known field of the wrong type and malformed quantities. Each is reported on itself (a Warning Event
 * and a condition), and every other object keeps reconciling: the informers never stop on them.
 */
class UnreadableResourcesTest {
    @RegisterExtension
    static final OperatorHarness harness = OperatorHarness.onMockApiServer(Duration.ofSeconds(2));

    private static final String NS = "unreadable";

    private static NonNamespaceOperation<GenericKubernetesResource, ?, Resource<GenericKubernetesResource>> raw(
            String kind) {
        return harness.client()
                .genericKubernetesResources(CrdConstants.API_VERSION, kind)
                .inNamespace(NS);
    }

    private static void create(String kind, String name, String spec) {
        raw(kind)
                .resource(Serialization.unmarshal("""
                        {"apiVersion": "kvindexer.io/v1alpha1", "kind": "%s",
                         "metadata": {"name": "%s", "namespace": "%s"}, "spec": %s}
                        """.formatted(kind, name, NS, spec), GenericKubernetesResource.class))
                .create();
    }

    private static List<String> warnings(String name) {
        return harness.client().v1().events().inNamespace(NS).list().getItems().stream()
                .filter(e -> name.equals(e.getInvolvedObject().getName()) && "Warning".equals(e.getType()))
                .map(e -> e.getReason() + ": " + e.getMessage())
                .toList();
    }

    private static Condition ready(String kind, String name) {
        @SuppressWarnings("unchecked")
        List<java.util.Map<String, Object>> conditions = (List<java.util.Map<String, Object>>)
                raw(kind).withName(name).get().get("status", "conditions");
        java.util.Map<String, Object> c = conditions.stream()
                .filter(m -> "Ready".equals(m.get("type")))
                .findFirst()
                .orElseThrow();
        return Serialization.unmarshal(Serialization.asJson(c), Condition.class);
    }

    @Test
    void anObjectThatCannotBeReadIsReportedOnItselfAndTheOthersKeepReconciling() {
        String image = "\"image\": \"ghcr.io/kv-indexer/kv-indexer:0.1.0\"";
        create("KvIndexer", "wrong-type", "{\"replicas\": \"two\", " + image + "}");
        create("KvIndexer", "empty-quantity", "{" + image + ", \"resources\": {\"requests\": {\"memory\": \"\"}}}");
        create("KvIndexer", "bad-quantity", "{" + image + ", \"resources\": {\"limits\": {\"cpu\": \"lots\"}}}");
        create("KvWorker", "wrong-selector", """
                {"indexerRef": "good", "selector": "app=vllm", "modelName": "llama", "blockSize": 16}""");
        harness.create(Resources.kvIndexer(NS, "good", 2, 8090));

        // every other object is reconciled as usual, now and after a change
        awaitReplicas("good", 2);
        harness.mergePatch(KvIndexer.class, NS, "good", "{\"spec\":{\"replicas\":3}}");
        awaitReplicas("good", 3);

        // each unreadable object says why, on itself
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            assertThat(warnings("wrong-type"))
                    .singleElement()
                    .asString()
                    .startsWith("Unreadable: spec.replicas: ")
                    .contains("\"two\"");
            assertThat(ready("KvIndexer", "wrong-type").getReason()).isEqualTo("Unreadable");
            assertThat(warnings("empty-quantity"))
                    .singleElement()
                    .asString()
                    .startsWith("Unreadable: spec.resources.requests.memory: ");
            assertThat(ready("KvIndexer", "empty-quantity").getReason()).isEqualTo("Unreadable");
            assertThat(warnings("bad-quantity"))
                    .containsExactly("InvalidSpec: spec.resources.limits.cpu: \"lots\" is not a quantity");
            assertThat(ready("KvIndexer", "bad-quantity").getReason()).isEqualTo("InvalidSpec");
            assertThat(warnings("wrong-selector")).singleElement().asString().startsWith("Unreadable: spec.selector: ");
            assertThat(ready("KvWorker", "wrong-selector").getReason()).isEqualTo("Unreadable");
        });
        assertThat(harness.statefulSet(NS, "wrong-type")).isNull();
        assertThat(harness.statefulSet(NS, "bad-quantity")).isNull();
        assertThat(harness.operator().getRuntimeInfo().allEventSourcesAreHealthy())
                .as("no informer stopped on them")
                .isTrue();
        // the operator writes only status: what the user wrote is still there to fix
        Object replicas = raw("KvIndexer").withName("wrong-type").get().get("spec", "replicas");
        assertThat(replicas).isEqualTo("two");

        // fixed by the user: reconciled like any other
        harness.mergePatch(KvIndexer.class, NS, "wrong-type", "{\"spec\":{\"replicas\":1}}");
        awaitReplicas("wrong-type", 1);
    }

    /** Waits until the StatefulSet of KvIndexer {@code name} asks for {@code replicas}: the object was reconciled. */
    private static void awaitReplicas(String name, int replicas) {
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(
                        () -> assertThat(harness.statefulSet(NS, name).getSpec().getReplicas())
                                .isEqualTo(replicas));
    }
}

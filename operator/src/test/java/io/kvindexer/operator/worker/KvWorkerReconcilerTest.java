package io.kvindexer.operator.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.RETURNS_DEEP_STUBS;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.kvindexer.operator.client.IndexerClient;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * reconcile() called directly: a Mockito Context (what the caches hold; deep stubs stand in for the controller's
 * cache that the status write also updates), the CRUD mock as the API server.
 */
@EnableKubernetesMockClient(crud = true)
class KvWorkerReconcilerTest {
    static KubernetesClient client;
    private static final String NS = "reconcile";
    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-03-04T05:06:07Z"), ZoneOffset.UTC);
    private KvWorkerReconciler reconciler;
    private Context<KvWorker> context;

    @BeforeEach
    @SuppressWarnings("unchecked")
    void setUp() {
        OperatorHarness.installCrds(client);
        reconciler = new KvWorkerReconciler(OperatorHarness.services(client, new IndexerClient(), CLOCK));
        context = mock(Context.class, RETURNS_DEEP_STUBS);
        when(context.getClient()).thenReturn(client);
    }

    private KvWorker created(KvWorker w) {
        return client.resources(KvWorker.class).inNamespace(NS).resource(w).create();
    }

    private Condition ready(String name) {
        return client.resources(KvWorker.class).inNamespace(NS).withName(name).get().getStatus().conditions().stream()
                .filter(c -> c.getType().equals("Ready"))
                .findFirst()
                .orElseThrow();
    }

    @Test
    void anInvalidSpecIsWrittenAsAConditionAndNotRetried() {
        // given a KvWorker whose ports overflow with its dp size
        KvWorker w = created(Resources.kvWorker(NS, "overflow", "kv", Map.of("app", "x"), "m", 16, 65535, null, 2));
        // when
        var control = reconciler.reconcile(w, context);
        // then
        assertThat(control.isNoUpdate()).isTrue();
        assertThat(control.getScheduleDelay()).isEmpty();
        Condition ready = ready("overflow");
        assertThat(ready.getStatus()).isEqualTo("False");
        assertThat(ready.getReason()).isEqualTo("InvalidSpec");
        assertThat(ready.getMessage()).isEqualTo("spec.zmqPort + dataParallelSize - 1 = 65536 exceeds 65535");
        assertThat(ready.getLastTransitionTime()).isEqualTo("2026-03-04T05:06:07Z");
        assertThat(client.v1().events().inNamespace(NS).list().getItems())
                .anySatisfy(e -> assertThat(e.getReason()).isEqualTo("InvalidSpec"));
    }

    @Test
    void aMissingIndexerIsReportedAndRetriedAtTheResyncPeriod() {
        KvWorker w = created(Resources.kvWorker(NS, "orphan", "missing", Map.of("app", "x"), "m", 16, 5557, null, 1));
        when(context.getSecondaryResource(KvIndexer.class, KvWorkerReconciler.INDEXERS))
                .thenReturn(Optional.empty());

        var control = reconciler.reconcile(w, context);

        assertThat(control.getScheduleDelay()).contains(30_000L);
        assertThat(ready("orphan").getReason()).isEqualTo("IndexerNotFound");
        assertThat(ready("orphan").getMessage()).contains("missing").contains(NS);
    }

    @Test
    void aSecondReconcileWithTheSameOutcomeWritesNothing() {
        KvWorker w = created(Resources.kvWorker(NS, "same", "missing", Map.of("app", "x"), "m", 16, 5557, null, 1));
        when(context.getSecondaryResource(KvIndexer.class, KvWorkerReconciler.INDEXERS))
                .thenReturn(Optional.empty());
        reconciler.reconcile(w, context);
        KvWorker after = client.resources(KvWorker.class)
                .inNamespace(NS)
                .withName("same")
                .get();

        reconciler.reconcile(after, context);

        assertThat(client.resources(KvWorker.class)
                        .inNamespace(NS)
                        .withName("same")
                        .get()
                        .getMetadata()
                        .getResourceVersion())
                .isEqualTo(after.getMetadata().getResourceVersion());
    }

    @Test
    void aReconcileThatThrowsLeavesConditionsSayingWhyAndKeepsThePods() {
        KvWorker w = created(Resources.kvWorker(NS, "throws", "kv", Map.of("app", "x"), "m", 16, 5557, null, 1));
        w.setStatus(new io.kvindexer.operator.crd.v1alpha1.KvWorkerStatus(
                1L,
                1,
                1,
                java.util.List.of(new io.kvindexer.operator.crd.v1alpha1.KvWorkerStatus.PodRegistration(
                        "vllm-a", "7", "tcp://x:1", null, java.util.List.of("kv-0"))),
                java.util.List.of()));

        var control = reconciler.updateErrorStatus(
                w, context, new io.fabric8.kubernetes.client.KubernetesClientException("API server said no"));

        assertThat(control.isDefaultErrorProcessing()).isFalse();
        KvWorker patched = control.getResource().orElseThrow();
        Condition ready = patched.getStatus().conditions().stream()
                .filter(c -> c.getType().equals("Ready"))
                .findFirst()
                .orElseThrow();
        assertThat(ready.getStatus()).isEqualTo("False");
        assertThat(ready.getReason()).isEqualTo("ReconcileFailed");
        assertThat(ready.getMessage()).isEqualTo("KubernetesClientException: API server said no");
        assertThat(patched.getStatus().pods()).extracting(p -> p.pod()).containsExactly("vllm-a");
        assertThat(patched.getSpec().getIndexerRef())
                .as("the whole resource, not a status-only stub")
                .isEqualTo("kv");
    }
}

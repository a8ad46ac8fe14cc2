package io.kvindexer.operator.indexer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.RETURNS_DEEP_STUBS;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;
import static org.mockito.Mockito.withSettings;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ResourceCache;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.kvindexer.operator.client.IndexerClient;
import io.kvindexer.operator.client.IndexerClientException;
import io.kvindexer.operator.client.IndexerEndpoint;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * reconcile() called directly, as {@code KvWorkerReconcilerTest} does: a Mockito Context (the managed workflow,
 * the replica-pod informer's cache), the CRUD mock as the API server, and an in-memory peer list per replica behind
 * the typed client.
 */
@EnableKubernetesMockClient(crud = true)
class KvIndexerReconcilerTest {
    static KubernetesClient client;
    private static final String NS = "kvi-reconcile";
    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-03-04T05:06:07Z"), ZoneOffset.UTC);

    /** Peer lists by replica pod; a replica named in {@code down} answers nothing. */
    static final class FakePeers extends IndexerClient {
        final Map<String, List<String>> peers = new ConcurrentHashMap<>();
        final Set<String> down = ConcurrentHashMap.newKeySet();
        final List<String> calls = java.util.Collections.synchronizedList(new ArrayList<>());

        private List<String> of(IndexerEndpoint replica) {
            calls.add(replica.name());
            if (down.contains(replica.name())) {
                throw new IndexerClientException(replica.name() + " unreachable: ConnectException", -1, null);
            }
            return peers.computeIfAbsent(
                    replica.name(), k -> java.util.Collections.synchronizedList(new ArrayList<>()));
        }

        @Override
        public List<String> peers(IndexerEndpoint replica) {
            return List.copyOf(of(replica));
        }

        @Override
        public void registerPeer(IndexerEndpoint replica, String url) {
            of(replica).add(url);
        }

        @Override
        public void deregisterPeer(IndexerEndpoint replica, String url) {
            of(replica).remove(url);
        }
    }

    private FakePeers peers;
    private KvIndexerReconciler reconciler;
    private Context<KvIndexer> context;
    private final List<Pod> replicaPods = new ArrayList<>();

    @BeforeEach
    @SuppressWarnings("unchecked")
    void setUp() {
        OperatorHarness.installCrds(client);
        peers = new FakePeers();
        reconciler = new KvIndexerReconciler(OperatorHarness.services(client, peers, CLOCK));
        context = mock(Context.class, RETURNS_DEEP_STUBS);
        when(context.getClient()).thenReturn(client);
        // an interface mock (the reconciler reads the informer through its cache interface): cheap to make
        EventSource<Pod, KvIndexer> pods =
                mock(EventSource.class, withSettings().extraInterfaces(ResourceCache.class));
        when(((ResourceCache<Pod>) pods).list(eq(NS), any())).thenAnswer(inv -> {
            Predicate<Pod> filter = inv.getArgument(1);
            return List.copyOf(replicaPods).stream().filter(filter);
        });
        when(context.eventSourceRetriever().getEventSourceFor(Pod.class, KvIndexerReconciler.INDEXER_PODS))
                .thenReturn(pods);
    }

    private KvIndexer created(KvIndexer kvi) {
        return client.resources(KvIndexer.class).inNamespace(NS).resource(kvi).create();
    }

    private void replica(KvIndexer kvi, int ordinal, boolean ready) {
        replicaPods.add(OperatorHarness.pod(
                new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
                        .withName(IndexerNames.pod(kvi, ordinal))
                        .withNamespace(NS)
                        .withLabels(IndexerNames.labels(kvi))
                        .build(),
                "10.0.0." + (ordinal + 1),
                ready));
    }

    private Condition condition(String name, String type) {
        return Resources.condition(
                client.resources(KvIndexer.class)
                        .inNamespace(NS)
                        .withName(name)
                        .get()
                        .getStatus()
                        .conditions(),
                type);
    }

    private List<String> warnings(String name) {
        return client.v1().events().inNamespace(NS).list().getItems().stream()
                .filter(e -> name.equals(e.getInvolvedObject().getName()) && "Warning".equals(e.getType()))
                .map(e -> e.getReason() + ": " + e.getMessage())
                .toList();
    }

    private static String url(String name, int ordinal) {
        return "https://" + name + "-" + ordinal + "." + name + "-peers." + NS + ".svc:8090";
    }

    @Test
    void anInvalidSpecIsAConditionAndAnEventAndNoDependentIsTouched() {
        KvIndexer kvi = Resources.kvIndexer(NS, "bad", 2, 8090);
        kvi.getSpec().setIndexShards(8); // more shards than the 4 writer threads
        kvi = created(kvi);

        var control = reconciler.reconcile(kvi, context);

        assertThat(control.isNoUpdate()).isTrue();
        assertThat(control.getScheduleDelay())
                .as("not retried until the spec changes")
                .isEmpty();
        Condition ready = condition("bad", "Ready");
        assertThat(ready.getReason()).isEqualTo("InvalidSpec");
        assertThat(ready.getMessage()).isEqualTo("spec.indexShards must be between 1 and 4, got 8");
        assertThat(warnings("bad")).containsExactly("InvalidSpec: spec.indexShards must be between 1 and 4, got 8");
        assertThat(peers.calls).isEmpty();
    }

    /**
     * A name the API server takes for a KvIndexer but not for what is named after it: 53 characters (the StatefulSet's
     * pods, labelled controller-revision-hash: name-hash, could never be created) or starting with a digit (no
     * Service may be named so).
     */
    @Test
    void aNameTheReplicasAndServicesCannotHaveIsAnInvalidSpec() {
        for (String name : List.of("kv-indexer-llama-3-1-70b-instruct-production-us-east1", "1st-indexer")) {
            KvIndexer kvi = created(Resources.kvIndexer(NS, name, 2, 8090));

            var control = reconciler.reconcile(kvi, context);

            assertThat(control.getScheduleDelay()).isEmpty();
            Condition ready = condition(name, "Ready");
            assertThat(ready.getReason()).isEqualTo("InvalidSpec");
            assertThat(ready.getMessage())
                    .startsWith("metadata.name must be at most 52 lower-case letters, digits and '-', beginning with a"
                            + " letter")
                    .contains("got \"" + name + "\" (" + name.length() + " characters)");
        }
        verify(context.managedWorkflowAndDependentResourceContext(), org.mockito.Mockito.never())
                .reconcileManagedWorkflow();
        assertThat(KvIndexerValidation.validate(Resources.kvIndexer(NS, "k".repeat(52), 2, 8090)))
                .isNull();
    }

    @Test
    void eachReadyReplicaGetsEveryOtherReplicaAsItsPeersAndTheStatusCountsThem() {
        KvIndexer kvi = created(Resources.kvIndexer(NS, "kv", 3, 8090));
        replica(kvi, 0, true);
        replica(kvi, 1, true);
        replica(kvi, 2, false); // starting: not called
        peers.peers.put("kv-1", new ArrayList<>(List.of(url("kv", 0), "http://gone:8090")));

        var control = reconciler.reconcile(kvi, context);

        verify(context.managedWorkflowAndDependentResourceContext()).reconcileManagedWorkflow();
        assertThat(control.getScheduleDelay()).contains(30_000L);
        assertThat(new TreeMap<>(peers.peers))
                .containsOnlyKeys("kv-0", "kv-1")
                .containsEntry("kv-0", List.of(url("kv", 1), url("kv", 2)))
                .containsEntry("kv-1", List.of(url("kv", 0), url("kv", 2)));
        KvIndexer after =
                client.resources(KvIndexer.class).inNamespace(NS).withName("kv").get();
        assertThat(after.getStatus().ready()).isEqualTo("2/3");
        assertThat(after.getStatus().replicas()).isEqualTo(3);
        assertThat(condition("kv", "Ready").getReason()).isEqualTo("ReplicasNotReady");
        assertThat(condition("kv", "Degraded").getStatus()).isEqualTo("False");
    }

    @Test
    void anUnreachableReplicaDegradesTheStatusIsRetriedSoonAndDoesNotHoldUpTheOthers() {
        KvIndexer kvi = created(Resources.kvIndexer(NS, "half", 2, 8090));
        replica(kvi, 0, true);
        replica(kvi, 1, true);
        peers.down.add("half-1");

        var control = reconciler.reconcile(kvi, context);

        assertThat(control.getScheduleDelay())
                .as("back-off, not the resync period")
                .contains(500L);
        assertThat(peers.peers.get("half-0")).containsExactly(url("half", 1));
        Condition degraded = condition("half", "Degraded");
        assertThat(degraded.getStatus()).isEqualTo("True");
        assertThat(degraded.getReason()).isEqualTo("SyncFailed");
        assertThat(degraded.getMessage()).startsWith("half-1: half-1 unreachable");
        assertThat(warnings("half")).anySatisfy(w -> assertThat(w).startsWith("PeerSyncFailed: half-1:"));

        // back: the next reconcile heals it and the back-off is forgotten
        peers.down.clear();
        KvIndexer now = client.resources(KvIndexer.class)
                .inNamespace(NS)
                .withName("half")
                .get();
        assertThat(reconciler.reconcile(now, context).getScheduleDelay()).contains(30_000L);
        assertThat(peers.peers.get("half-1")).containsExactly(url("half", 0));
        assertThat(condition("half", "Degraded").getStatus()).isEqualTo("False");
    }

    @Test
    void aReconcileThatThrowsIsAConditionAndAnEventAndKeepsTheCounts() {
        KvIndexer kvi = created(Resources.kvIndexer(NS, "throws", 2, 8090));
        kvi.setStatus(new io.kvindexer.operator.crd.v1alpha1.KvIndexerStatus(1L, 2, 2, "2/2", "x", List.of(), null));

        var control = reconciler.updateErrorStatus(kvi, context, new KubernetesClientException("quota exceeded"));

        KvIndexer patched = control.getResource().orElseThrow();
        assertThat(patched.getStatus().ready()).isEqualTo("2/2");
        Condition ready = Resources.condition(patched.getStatus().conditions(), "Ready");
        assertThat(ready.getReason()).isEqualTo("ReconcileFailed");
        assertThat(ready.getMessage()).isEqualTo("KubernetesClientException: quota exceeded");
        assertThat(warnings("throws")).containsExactly("ReconcileFailed: quota exceeded");
    }
}

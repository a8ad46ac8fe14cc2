package io.kvindexer.operator.indexer;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.Workflow;
import io.javaoperatorsdk.operator.api.reconciler.dependent.Dependent;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.SecondaryToPrimaryMapper;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.kvindexer.operator.client.IndexerClient;
import io.kvindexer.operator.client.IndexerClientException;
import io.kvindexer.operator.client.IndexerEndpoint;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.StatusWriter;
import io.kvindexer.operator.observability.EventRecorder;
import io.kvindexer.operator.observability.OperatorMetrics;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * KvIndexer → StatefulSet, headless Service, client Service, PodDisruptionBudget (managed dependents), then each
 * Ready replica's peer list (/register_peer, /deregister_peer) and the status.
 */
@Workflow(explicitInvocation = true, dependents = {
    @Dependent(name = "statefulset", type = StatefulSetDependent.class),
    @Dependent(name = "headless-service", type = HeadlessServiceDependent.class),
    @Dependent(name = "client-service", type = ClientServiceDependent.class),
    @Dependent(name = "pdb", type = PdbDependent.class,
            reconcilePrecondition = PdbDependent.MoreThanOneReplica.class)
})
@ControllerConfiguration(name = KvIndexerReconciler.NAME)
public class KvIndexerReconciler implements Reconciler<KvIndexer> {
    public static final String NAME = "kvindexer";
    public static final String INDEXER_PODS = "indexer-pods";
    private static final Logger LOG = LoggerFactory.getLogger(KvIndexerReconciler.class);

    private final IndexerClient client;
    private final KvIndexerStatusFactory statusFactory;
    private final EventRecorder events;
    private final OperatorMetrics metrics;
    private final Duration resync;
    private final Backoff backoff;

    public KvIndexerReconciler(IndexerClient client, Clock clock, EventRecorder events, OperatorMetrics metrics,
            Duration resync) {
        this.client = client;
        this.statusFactory = new KvIndexerStatusFactory(clock);
        this.events = events;
        this.metrics = metrics;
        this.resync = resync;
        this.backoff = new Backoff(Duration.ofMillis(500), resync);
    }

    @Override
    public List<EventSource<?, KvIndexer>> prepareEventSources(EventSourceContext<KvIndexer> context) {
        return List.of(new InformerEventSource<>(indexerPodsInformer(INDEXER_PODS, KvIndexer.class,
                pod -> Set.of(new ResourceID(
                        pod.getMetadata().getLabels().get(IndexerNames.LABEL_INSTANCE),
                        pod.getMetadata().getNamespace()))), context));
    }

    /**
     * The informer over indexer pods (ours, by label), shared in shape by both reconcilers; it watches the
     * controller's namespaces (OperatorSettings#watchNamespaces).
     */
    public static <P extends HasMetadata> InformerEventSourceConfiguration<Pod> indexerPodsInformer(String name,
            Class<P> primary, SecondaryToPrimaryMapper<Pod> mapper) {
        return InformerEventSourceConfiguration.from(Pod.class, primary)
                .withName(name)
                .withNamespacesInheritedFromController()
                .withLabelSelector(IndexerNames.MANAGED_SELECTOR)
                .withSecondaryToPrimaryMapper(mapper)
                .build();
    }

    @Override
    public UpdateControl<KvIndexer> reconcile(KvIndexer kvi, Context<KvIndexer> context) {
        String invalid = KvIndexerValidation.validate(kvi.getSpec());
        if (invalid != null) {
            LOG.atWarn().addKeyValue("kvindexer", key(kvi)).addKeyValue("reason", invalid).log("invalid spec");
            events.warning(kvi, "InvalidSpec", invalid);
            StatusWriter.write(context.getClient(), kvi, statusFactory.invalidSpec(kvi, invalid));
            return UpdateControl.noUpdate();
        }
        context.managedWorkflowAndDependentResourceContext().reconcileManagedWorkflow();

        List<IndexerReplica> replicas = IndexerReplica.of(kvi, indexerPods(context, kvi));
        Map<String, String> peerErrors = new TreeMap<>(syncPeers(kvi, replicas));
        String monitor = ServiceMonitors.sync(context.getClient(), kvi);
        if (monitor != null) {
            peerErrors.put("servicemonitor", monitor);
            events.warning(kvi, "ServiceMonitorFailed", monitor);
        }
        KvIndexer status = statusFactory.status(kvi, replicas, peerErrors);
        Duration next = peerErrors.isEmpty() ? resync : backoff.next(key(kvi));
        if (peerErrors.isEmpty()) {
            backoff.reset(key(kvi));
        }
        StatusWriter.write(context.getClient(), kvi, status);
        return UpdateControl.<KvIndexer>noUpdate().rescheduleAfter(next);
    }

    static List<Pod> indexerPods(Context<KvIndexer> context, KvIndexer kvi) {
        InformerEventSource<Pod, KvIndexer> pods = (InformerEventSource<Pod, KvIndexer>) context
                .eventSourceRetriever().getEventSourceFor(Pod.class, INDEXER_PODS);
        String name = kvi.getMetadata().getName();
        return pods.list(kvi.getMetadata().getNamespace(),
                p -> name.equals(p.getMetadata().getLabels().get(IndexerNames.LABEL_INSTANCE))).toList();
    }

    /** Peer lists of all Ready replicas, in parallel; returns replica pod → error for those that failed. */
    private Map<String, String> syncPeers(KvIndexer kvi, List<IndexerReplica> replicas) {
        List<String> urls = IndexerNames.stableUrls(kvi);
        Map<String, String> errors = new ConcurrentHashMap<>();
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<?>> calls = replicas.stream().filter(IndexerReplica::ready).<Future<?>>map(r -> pool.submit(() -> {
                IndexerEndpoint endpoint = r.endpoint(kvi.getSpec().getPort());
                List<String> desired = IntStream.range(0, urls.size()).filter(i -> i != r.ordinal())
                        .mapToObj(urls::get).toList();
                try {
                    PeerPlan plan = PeerPlan.of(desired, client.peers(endpoint));
                    plan.toRegister().forEach(u -> client.registerPeer(endpoint, u));
                    plan.toDeregister().forEach(u -> client.deregisterPeer(endpoint, u));
                    if (!plan.isEmpty()) {
                        LOG.atInfo().addKeyValue("kvindexer", key(kvi)).addKeyValue("replica", r.pod())
                                .addKeyValue("added", plan.toRegister()).addKeyValue("removed", plan.toDeregister())
                                .log("peer list updated");
                    }
                } catch (IndexerClientException e) {
                    errors.put(r.pod(), e.getMessage());
                    metrics.reconcileError(NAME);
                    LOG.atWarn().addKeyValue("kvindexer", key(kvi)).addKeyValue("replica", r.pod())
                            .addKeyValue("error", e.getMessage()).log("peer sync failed");
                }
            })).toList();
            for (Future<?> f : calls) {
                try {
                    f.get();
                } catch (Exception e) {
                    errors.putIfAbsent("operator", String.valueOf(e));
                }
            }
        }
        if (!errors.isEmpty()) {
            events.warning(kvi, "PeerSyncFailed", KvIndexerStatusFactory.describe(errors));
        }
        return errors;
    }

    private static String key(KvIndexer kvi) {
        return kvi.getMetadata().getNamespace() + "/" + kvi.getMetadata().getName();
    }
}

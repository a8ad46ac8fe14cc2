package io.kvindexer.operator.indexer;

import static io.kvindexer.operator.reconcile.ControllerServices.key;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.Workflow;
import io.javaoperatorsdk.operator.api.reconciler.dependent.Dependent;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.kvindexer.operator.client.IndexerClientException;
import io.kvindexer.operator.client.IndexerEndpoint;
import io.kvindexer.operator.client.ReplicaAccess;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.KvIndexerSpec;
import io.kvindexer.operator.crd.v1alpha1.KvIndexerStatus;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.reconcile.ControllerServices;
import io.kvindexer.operator.reconcile.FanOut;
import io.kvindexer.operator.reconcile.IndexerPods;
import io.kvindexer.operator.reconcile.IndexerReplica;
import io.kvindexer.operator.reconcile.ReplicaAccesses;
import io.kvindexer.operator.reconcile.Retention;
import io.kvindexer.operator.reconcile.SpecReconciler;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.IntStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * KvIndexer → its token and certificate Secrets ({@link SecuritySecrets}, first: the pods mount them), then
 * StatefulSet, headless Service, client Service, NetworkPolicy, PodDisruptionBudget, the optional autoscaler and
 * ServiceMonitor (managed dependents), then each Ready replica's peer list (/register_peer, /deregister_peer) and the status.
 * Before anything is written, every object of its names must be absent or its own ({@link NameClaims}).
 */
@Workflow(
        explicitInvocation = true,
        dependents = {
            @Dependent(name = "statefulset", type = StatefulSetDependent.class),
            @Dependent(name = "headless-service", type = HeadlessServiceDependent.class),
            @Dependent(name = "client-service", type = ClientServiceDependent.class),
            @Dependent(
                    name = "pdb",
                    type = PdbDependent.class,
                    reconcilePrecondition = IndexerConditions.MoreThanOneReplica.class),
            @Dependent(
                    name = "networkpolicy",
                    type = NetworkPolicyDependent.class,
                    reconcilePrecondition = IndexerConditions.NetworkPolicyWanted.class),
            @Dependent(
                    name = "hpa",
                    type = HpaDependent.class,
                    reconcilePrecondition = IndexerConditions.AutoscalingSet.class),
            @Dependent(
                    name = "servicemonitor",
                    type = ServiceMonitorDependent.class,
                    activationCondition = IndexerConditions.ServiceMonitorCrdInstalled.class,
                    reconcilePrecondition = IndexerConditions.ServiceMonitorWanted.class)
        })
@ControllerConfiguration(name = KvIndexerReconciler.NAME)
public class KvIndexerReconciler
        extends SpecReconciler<KvIndexer, KvIndexerSpec, KvIndexerStatus, KvIndexerStatusFactory>
        implements Reconciler<KvIndexer> {
    public static final String NAME = "kvindexer";
    public static final String INDEXER_PODS = "indexer-pods";
    public static final String KV_WORKERS = "kvworkers";
    private static final Logger LOG = LoggerFactory.getLogger(KvIndexerReconciler.class);

    public KvIndexerReconciler(ControllerServices services) {
        super(
                services,
                LOG,
                KvIndexerValidation::validate,
                new KvIndexerStatusFactory(services.clock()),
                Retention.Live::indexers);
    }

    @Override
    public List<EventSource<?, KvIndexer>> prepareEventSources(EventSourceContext<KvIndexer> context) {
        // a KvWorker that names a KvIndexer changes its NetworkPolicy's egress (the engines' pods and ports)
        var workers = InformerEventSourceConfiguration.from(KvWorker.class, KvIndexer.class)
                .withName(KV_WORKERS)
                .withNamespacesInheritedFromController()
                // its spec only: the KvWorker's status changes with every registration and would reconcile for nothing
                .withOnUpdateFilter((KvWorker now, KvWorker before) -> !java.util.Objects.equals(
                        now.getMetadata().getGeneration(), before.getMetadata().getGeneration()))
                .withSecondaryToPrimaryMapper((KvWorker w) -> w.getSpec() == null
                                || w.getSpec().getIndexerRef() == null
                        ? Set.of()
                        : Set.of(new ResourceID(
                                w.getSpec().getIndexerRef(), w.getMetadata().getNamespace())))
                .build();
        return List.of(
                IndexerPods.eventSource(
                        IndexerPods.informer(
                                INDEXER_PODS,
                                KvIndexer.class,
                                pod -> Set.of(new ResourceID(
                                        pod.getMetadata().getLabels().get(IndexerNames.LABEL_INSTANCE),
                                        pod.getMetadata().getNamespace()))),
                        context,
                        services),
                new InformerEventSource<>(workers, context) {
                    /**
                     * JOSDK maps a KvWorker's new state only: one moved to another KvIndexer leaves the former's
                     * NetworkPolicy now, not at its next resync.
                     */
                    @Override
                    public void onUpdate(KvWorker before, KvWorker now) {
                        super.onUpdate(before, now);
                        String former = before.getSpec() == null
                                ? null
                                : before.getSpec().getIndexerRef();
                        if (former != null
                                && (now.getSpec() == null
                                        || !former.equals(now.getSpec().getIndexerRef()))) {
                            getEventHandler()
                                    .handleEvent(new Event(new ResourceID(
                                            former, before.getMetadata().getNamespace())));
                        }
                    }
                });
    }

    @Override
    protected UpdateControl<KvIndexer> reconcileAccepted(KvIndexer kvi, Context<KvIndexer> context) {
        String ns = kvi.getMetadata().getNamespace();
        String taken = NameClaims.problem(
                kvi,
                claim -> existing(context.getClient(), ns, claim),
                context.getPrimaryCache().list(ns).toList());
        if (services.refuses(
                LOG,
                context,
                kvi,
                taken,
                (reason, m) -> statusFactory.refused(kvi, reason, m).getStatus())) {
            // the name is freed by the other KvIndexer's or the user's delete, which triggers no reconcile of this one
            return UpdateControl.<KvIndexer>noUpdate().rescheduleAfter(services.resync());
        }
        String securityWarning = SecuritySecrets.reconcile(
                context.getClient(), kvi, services.clock().instant());
        context.managedWorkflowAndDependentResourceContext().reconcileManagedWorkflow();

        List<IndexerReplica> replicas = IndexerPods.replicas(context, INDEXER_PODS, kvi);
        Map<String, String> peerErrors = new TreeMap<>(syncPeers(kvi, replicas, context));
        if (securityWarning != null) {
            peerErrors.put("tls", securityWarning);
            services.events().warning(kvi, "TlsIssuerUnavailable", securityWarning);
        }
        String persistence = StateVolume.notApplied(
                kvi, context.getSecondaryResource(StatefulSet.class).orElse(null), context.getClient());
        if (persistence != null) {
            peerErrors.put("persistence", persistence);
            services.events().warning(kvi, "PersistenceNotApplied", persistence);
        }
        if (ServiceMonitors.wanted(kvi) && !ServiceMonitors.crdInstalled(context.getClient())) {
            peerErrors.put("servicemonitor", ServiceMonitors.NOT_INSTALLED);
            services.events().warning(kvi, "ServiceMonitorFailed", ServiceMonitors.NOT_INSTALLED);
        }
        IndexerPods.retainCallMetrics(context, INDEXER_PODS, services.metrics());
        Duration next = backoff.after(key(kvi), !peerErrors.isEmpty(), services.resync());
        return writeStatus(
                context, kvi, statusFactory.status(kvi, replicas, peerErrors).getStatus(), next);
    }

    /** The object of {@code claim} in {@code ns}, or null (also when the operator may not read it: it writes none). */
    private static HasMetadata existing(KubernetesClient client, String ns, NameClaims.Claim claim) {
        try {
            return client.genericKubernetesResources(claim.type())
                    .inNamespace(ns)
                    .withName(claim.name())
                    .get();
        } catch (KubernetesClientException e) {
            if (e.getCode() == 403) {
                return null;
            }
            throw e;
        }
    }

    /**
     * A reconcile threw (a dependent could not be written, say): the conditions say so, the rest of the status stays,
     * and JOSDK retries with its own back-off.
     */
    @Override
    public ErrorStatusUpdateControl<KvIndexer> updateErrorStatus(
            KvIndexer kvi, Context<KvIndexer> context, Exception e) {
        ErrorStatusUpdateControl<KvIndexer> control = super.updateErrorStatus(kvi, context, e);
        services.events().warning(kvi, "ReconcileFailed", String.valueOf(e.getMessage()));
        forgetIfDeleted(kvi, context);
        return control;
    }

    /**
     * Peer lists of all Ready replicas, in parallel, each replica called as its pod serves and listed in the scheme
     * its pod serves (both change pod by pod while a change of spec.security rolls); returns replica pod → error for
     * those that failed.
     */
    private Map<String, String> syncPeers(KvIndexer kvi, List<IndexerReplica> replicas, Context<KvIndexer> context) {
        List<String> urls = IndexerReplica.stableUrls(kvi, replicas);
        List<IndexerReplica> ready =
                replicas.stream().filter(IndexerReplica::ready).toList();
        Map<String, ReplicaAccess> accesses =
                ReplicaAccesses.byReplica(context.getClient(), kvi, ready, services.cas());
        Map<String, String> errors = new TreeMap<>();
        FanOut.map(ready, r -> syncPeers(kvi, r, urls, accesses.get(r.pod())).map(e -> Map.entry(r.pod(), e)))
                .forEach(e -> e.ifPresent(x -> errors.put(x.getKey(), x.getValue())));
        if (!errors.isEmpty()) {
            services.events().warning(kvi, "PeerSyncFailed", KvIndexerStatusFactory.describe(errors));
        }
        return errors;
    }

    /** One replica's peer list: every other replica's stable URL. Returns the error, if any. */
    private Optional<String> syncPeers(KvIndexer kvi, IndexerReplica r, List<String> urls, ReplicaAccess access) {
        IndexerEndpoint endpoint = r.endpoint(kvi.getSpec().getPort(), access);
        List<String> desired = IntStream.range(0, urls.size())
                .filter(i -> i != r.ordinal())
                .mapToObj(urls::get)
                .toList();
        try {
            PeerPlan plan = PeerPlan.of(desired, services.client().peers(endpoint));
            plan.toRegister().forEach(u -> services.client().registerPeer(endpoint, u));
            plan.toDeregister().forEach(u -> services.client().deregisterPeer(endpoint, u));
            if (!plan.isEmpty()) {
                atReplica(Level.INFO, kvi, r.pod())
                        .addKeyValue("added", plan.toRegister())
                        .addKeyValue("removed", plan.toDeregister())
                        .log("peer list updated");
            }
            return Optional.empty();
        } catch (IndexerClientException e) {
            replicaFailed(NAME, kvi, r.pod(), e.getMessage(), "peer sync failed");
            return Optional.of(e.getMessage());
        }
    }
}

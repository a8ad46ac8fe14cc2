package io.kvindexer.operator.worker;

import static io.kvindexer.operator.reconcile.ControllerServices.key;

import io.fabric8.kubernetes.api.model.Pod;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.ResourceCache;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.kvindexer.operator.client.ReplicaAccess;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerSpec;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerStatus;
import io.kvindexer.operator.observability.EventRecorder;
import io.kvindexer.operator.observability.OperatorMetrics;
import io.kvindexer.operator.reconcile.ControllerServices;
import io.kvindexer.operator.reconcile.FanOut;
import io.kvindexer.operator.reconcile.IndexerPods;
import io.kvindexer.operator.reconcile.IndexerReplica;
import io.kvindexer.operator.reconcile.KvWorkerValidation;
import io.kvindexer.operator.reconcile.LabelSelectors;
import io.kvindexer.operator.reconcile.ReplicaAccesses;
import io.kvindexer.operator.reconcile.Retention;
import io.kvindexer.operator.reconcile.SpecReconciler;
import io.kvindexer.operator.reconcile.StatusUpdates;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * KvWorker → registrations. Level-triggered: desired = Ready engine pods × dp ranks (and those whose readiness flaps
 * for less than {@code spec.unregisterAfterSeconds}, {@link ReadinessHold}); actual = what each replica holds: its
 * GET /workers, read in full on the resync period, for a new replica incarnation and after a failed call, and in
 * between what the operator's own calls made of it ({@link KnownRegistrations}), so a change of one pod costs one
 * call per rank and replica. The difference is applied with /register and /unregister ({@link ReplicaSync}), every
 * replica in parallel so one unreachable replica never holds up the others (it is retried with back-off and
 * reported as Degraded). The finalizer (Cleaner) removes this KvWorker's engines from every replica when it is
 * deleted. Which instances are ours to remove comes from the status alone: it is written through the controller's
 * cache ({@link StatusUpdates}), so the next reconcile sees it even before the informer does.
 */
@ControllerConfiguration(name = KvWorkerReconciler.NAME)
public class KvWorkerReconciler extends SpecReconciler<KvWorker, KvWorkerSpec, KvWorkerStatus, KvWorkerStatusFactory>
        implements Reconciler<KvWorker>, Cleaner<KvWorker> {
    public static final String NAME = "kvworker";
    public static final String ENGINE_PODS = "engine-pods";
    public static final String INDEXER_PODS = "worker-indexer-pods";
    public static final String INDEXERS = "kvindexers";
    private static final Logger LOG = LoggerFactory.getLogger(KvWorkerReconciler.class);

    private final KnownRegistrations known;
    private final IndexerAddresses addresses;

    public KvWorkerReconciler(ControllerServices services) {
        super(
                services,
                LOG,
                w -> KvWorkerValidation.validate(w.getSpec()),
                new KvWorkerStatusFactory(services.clock()),
                Retention.Live::workers);
        KnownRegistrations snapshots = new KnownRegistrations(services.resync());
        IndexerAddresses reached = new IndexerAddresses();
        this.known = snapshots;
        this.addresses = reached;
        services.retention()
                .add(new Retention.Memory(
                        live -> {
                            snapshots.retainWorkers(live.workers());
                            reached.retain(live.indexers(), live.pods());
                        },
                        () -> snapshots.size() + reached.size()));
    }

    /** Every informer watches the controller's namespaces (OperatorSettings#watchNamespaces), never more. */
    @Override
    public List<EventSource<?, KvWorker>> prepareEventSources(EventSourceContext<KvWorker> context) {
        IndexerResourceCache<KvWorker> workers = context.getPrimaryCache();
        workers.addIndexer(WorkerMappers.BY_INDEXER_REF, WorkerMappers::indexerRefKey);

        var enginePods = InformerEventSourceConfiguration.from(Pod.class, KvWorker.class)
                .withName(ENGINE_PODS)
                .withNamespacesInheritedFromController()
                .withSecondaryToPrimaryMapper(WorkerMappers.enginePodToWorkers(workers))
                .build();
        var indexerPods =
                IndexerPods.informer(INDEXER_PODS, KvWorker.class, WorkerMappers.indexerPodToWorkers(workers));
        var indexers = InformerEventSourceConfiguration.from(KvIndexer.class, KvWorker.class)
                .withName(INDEXERS)
                .withNamespacesInheritedFromController()
                .withSecondaryToPrimaryMapper(WorkerMappers.indexerToWorkers(workers))
                .withPrimaryToSecondaryMapper(WorkerMappers.workerToIndexer())
                .build();
        var pods = IndexerPods.eventSource(indexerPods, context, services);
        var kvIndexers = new InformerEventSource<>(indexers, context) {
            @Override
            public void onDelete(KvIndexer kvi, boolean deletedFinalStateUnknown) {
                super.onDelete(kvi, deletedFinalStateUnknown);
                services.retention().sweep();
            }
        };
        // this controller's informers see all three kinds: what exists, for forgetting what does not
        services.retention().watch(() -> Retention.Live.of(kvIndexers.list(), workers.list(), pods.list()));
        return List.of(new InformerEventSource<>(enginePods, context), pods, kvIndexers);
    }

    @Override
    protected UpdateControl<KvWorker> reconcileAccepted(KvWorker worker, Context<KvWorker> context) {
        KvWorkerSpec spec = worker.getSpec();
        KvIndexer kvi = context.getSecondaryResource(KvIndexer.class, INDEXERS).orElse(null);
        if (!usable(kvi)) {
            boolean unreadable =
                    kvi != null && kvi.getSpec() != null && kvi.getSpec().unreadable() != null;
            String message = "KvIndexer " + spec.getIndexerRef()
                    + (unreadable
                            ? " cannot be read: " + kvi.getSpec().unreadable()
                            : " not found in namespace " + worker.getMetadata().getNamespace());
            if (kvi == null) {
                return indexerMissing(worker, context, message);
            }
            return writeStatus(
                    context,
                    worker,
                    statusFactory
                            .notReady(worker, unreadable ? "IndexerUnreadable" : "IndexerNotFound", message, false)
                            .getStatus(),
                    services.resync());
        }
        PodClaims claims = claims(worker, context);
        Map<String, String> claimed = new java.util.TreeMap<>();
        Set<Long> notOurs = new HashSet<>();
        List<Pod> pods = new java.util.ArrayList<>();
        for (Pod p : enginePods(context, worker)) {
            var earlier = claims.earlier(p);
            if (earlier.isEmpty()) {
                pods.add(p);
            } else {
                claimed.put(p.getMetadata().getName(), PodClaims.message(earlier.get()));
                instanceId(spec, p).ifPresent(notOurs::add);
            }
        }
        ReadinessHold hold = ReadinessHold.of(worker, pods, services.clock().instant());
        DesiredRegistrations desired = DesiredRegistrations.of(spec, pods, hold).withErrors(claimed);
        if (!hold.held().isEmpty()) {
            LOG.atDebug()
                    .addKeyValue("kvworker", key(worker))
                    .addKeyValue("pods", hold.held())
                    .addKeyValue("recheckIn", hold.recheckIn())
                    .log("not Ready for less than spec.unregisterAfterSeconds: kept registered");
        }
        Set<Long> owned = ownedInstances(worker);
        owned.removeAll(notOurs); // an earlier KvWorker's to register and remove
        owned.removeAll(leftToOthers(worker, context, claims, desired));
        Reregistrations reregister = Reregistrations.of(worker, desired);
        List<ReplicaOutcome> former = leaveFormer(worker, context, owned, spec.getIndexerRef());
        List<IndexerReplica> replicas = IndexerPods.replicas(context, INDEXER_PODS, kvi);
        List<ReplicaOutcome> outcomes = syncAll(worker, kvi, context, replicas, desired, owned, reregister);
        Set<String> replicaPods = replicas.stream().map(IndexerReplica::pod).collect(Collectors.toSet());
        boolean failed = Stream.concat(outcomes.stream(), former.stream()).anyMatch(ReplicaOutcome::failed);
        Duration next = backoff.after(key(worker), failed, services.resync());
        if (hold.recheckIn() != null && hold.recheckIn().compareTo(next) < 0) {
            next = hold.recheckIn(); // a hold runs out: unregister then, not at the next resync
        }
        return writeStatus(
                context,
                worker,
                statusFactory
                        .status(
                                worker,
                                desired,
                                outcomes,
                                former,
                                t -> reregister.stillPending(t, outcomes, replicaPods),
                                unsynced(replicaPods, outcomes))
                        .getStatus(),
                next);
    }

    @Override
    public DeleteControl cleanup(KvWorker worker, Context<KvWorker> context) {
        KvIndexer kvi = context.getSecondaryResource(KvIndexer.class, INDEXERS).orElse(null);
        boolean specUsable = worker.getSpec() != null && KvWorkerValidation.validate(worker.getSpec()) == null;
        // a refused spec registered nothing since, but what its status names is still held: left everywhere
        if (leaveFormer(
                        worker,
                        context,
                        ownedInstances(worker),
                        specUsable && kvi != null ? worker.getSpec().getIndexerRef() : null)
                .stream()
                .anyMatch(ReplicaOutcome::failed)) {
            return DeleteControl.noFinalizerRemoval().rescheduleAfter(backoff.next(key(worker)));
        }
        if (!usable(kvi) || !specUsable) {
            backoff.reset(key(worker));
            services.events().forget(worker);
            known.retain(key(worker), Set.of());
            return DeleteControl.defaultDelete();
        }
        Set<Long> owned = ownedInstances(worker);
        List<Pod> selected = enginePods(context, worker);
        owned.addAll(DesiredRegistrations.of(worker.getSpec(), selected).instanceIds());
        PodClaims claims = claims(worker, context);
        selected.stream() // another KvWorker that selects it takes it over
                .filter(claims::takenOverByOther)
                .forEach(p -> instanceId(worker.getSpec(), p).ifPresent(owned::remove));
        DesiredRegistrations none = new DesiredRegistrations(List.of(), Map.of());
        known.retain(key(worker), Set.of()); // the last word on every replica: read each in full
        List<ReplicaOutcome> outcomes = syncAll(
                worker,
                kvi,
                context,
                IndexerPods.replicas(context, INDEXER_PODS, kvi),
                none,
                owned,
                Reregistrations.NONE);
        if (outcomes.stream().anyMatch(ReplicaOutcome::failed)) {
            return DeleteControl.noFinalizerRemoval().rescheduleAfter(backoff.next(key(worker)));
        }
        backoff.reset(key(worker));
        known.retain(key(worker), Set.of());
        services.events().forget(worker);
        LOG.atInfo().addKeyValue("kvworker", key(worker)).log("unregistered from every replica; finalizer removed");
        return DeleteControl.defaultDelete();
    }

    /**
     * The KvIndexer {@code spec.indexerRef} names does not exist (not yet, a typo, or deleted): nothing of this
     * KvWorker is to stay registered anywhere, so its engines are unregistered from every replica the status says
     * holds them (those of the KvIndexer it named before, and those of a deleted one whose pods still run, reached
     * as they were last reached), retried with back-off. The pods stay listed, registered nowhere once that is done:
     * a KvIndexer created again under the name may come back from its snapshots holding them, and they are ours to
     * remove then.
     */
    private UpdateControl<KvWorker> indexerMissing(KvWorker worker, Context<KvWorker> context, String message) {
        known.retain(key(worker), Set.of()); // a KvIndexer that adopts the replicas left here is read in full
        List<ReplicaOutcome> former = leaveFormer(worker, context, ownedInstances(worker), null);
        boolean failed = former.stream().anyMatch(ReplicaOutcome::failed);
        return writeStatus(
                context,
                worker,
                statusFactory.indexerMissing(worker, message, former).getStatus(),
                backoff.after(key(worker), failed, services.resync()));
    }

    /**
     * The replicas of a KvIndexer other than {@code current} (null: every one) that the status says hold this
     * KvWorker's engines (spec.indexerRef was changed, or names none that exists, or a refused spec's KvWorker is
     * deleted): the engines are unregistered there, every Ready replica at once and read in full, since such a
     * replica is left only once. A replica whose pod is gone, or whose KvIndexer is gone and was never reached by
     * this operator, holds nothing any more.
     */
    @SuppressWarnings("unchecked")
    private List<ReplicaOutcome> leaveFormer(
            KvWorker worker, Context<KvWorker> context, Set<Long> owned, String current) {
        KvWorkerStatus status = worker.getStatus();
        if (status == null || status.pods() == null || owned.isEmpty()) {
            return List.of();
        }
        Set<String> named = status.pods().stream()
                .filter(p -> p.registeredOn() != null)
                .flatMap(p -> p.registeredOn().stream())
                .collect(Collectors.toSet());
        String ns = worker.getMetadata().getNamespace();
        Map<String, List<Pod>> byIndexer = source(context, INDEXER_PODS)
                .list(ns, p -> named.contains(p.getMetadata().getName()))
                .filter(p -> p.getMetadata().getLabels() != null)
                .collect(Collectors.groupingBy(
                        p -> p.getMetadata().getLabels().getOrDefault(IndexerNames.LABEL_INSTANCE, "")));
        if (current != null) {
            byIndexer.remove(current);
        }
        if (byIndexer.isEmpty()) {
            return List.of();
        }
        var indexers =
                (ResourceCache<KvIndexer>) context.eventSourceRetriever().getEventSourceFor(KvIndexer.class, INDEXERS);
        DesiredRegistrations none = new DesiredRegistrations(List.of(), Map.of());
        ReplicaSync sync = new ReplicaSync(services.client(), leaving(worker.getSpec()));
        List<ReplicaOutcome> outcomes = new java.util.ArrayList<>();
        byIndexer.forEach((name, pods) -> {
            KvIndexer old = indexers.get(new ResourceID(name, ns)).orElse(null);
            List<IndexerReplica> all = usable(old) ? IndexerReplica.of(old, pods) : IndexerReplica.of(pods);
            List<IndexerReplica> replicas = all.stream()
                    .filter(IndexerReplica::ready) // one not Ready recovers from a Ready peer, already left
                    .toList();
            IndexerAddresses.Address address = usable(old)
                    ? remember(
                            old, context, ReplicaAccesses.byReplica(context.getClient(), old, replicas, services.cas()))
                    : old == null ? addresses.of(ns, name) : null;
            if (address == null) {
                return;
            }
            Set<Long> leave = takenOver(worker, context, name, owned);
            outcomes.addAll(FanOut.map(
                    replicas, r -> sync.sync(r.endpoint(address.port(), address.access(r)), none, leave, Set.of())));
        });
        report(worker, context, outcomes);
        return outcomes;
    }

    /**
     * The spec a sync that only unregisters runs with: one the operator refuses may lack a block size, which
     * decides nothing when nothing is desired (every owned rank goes, whatever it is registered with).
     */
    private static KvWorkerSpec leaving(KvWorkerSpec spec) {
        if (spec != null && spec.getBlockSize() != null) {
            return spec;
        }
        KvWorkerSpec any = new KvWorkerSpec();
        any.setBlockSize(1);
        return any;
    }

    /**
     * {@code owned} less the engines that another KvWorker naming {@code indexer} selects: that one registers them
     * there now (the earlier KvWorker of a pod two select, {@link PodClaims}), so leaving must not take them from it.
     * Costs a look at the selected pods only while a former KvIndexer is being left. Of a refused spec, whose
     * selector may not be one to match with, the pods its status names.
     */
    private Set<Long> takenOver(KvWorker worker, Context<KvWorker> context, String indexer, Set<Long> owned) {
        String ns = worker.getMetadata().getNamespace();
        String self = worker.getMetadata().getName();
        List<KvWorker> others =
                context.getPrimaryCache().byIndex(WorkerMappers.BY_INDEXER_REF, ns + "/" + indexer).stream()
                        .filter(w -> !self.equals(w.getMetadata().getName())
                                && w.getMetadata().getDeletionTimestamp() == null
                                && KvWorkerValidation.validate(w.getSpec()) == null)
                        .toList();
        if (others.isEmpty()) {
            return owned;
        }
        PodClaims claims = new PodClaims(worker, others);
        Set<Long> leave = new HashSet<>(owned);
        if (KvWorkerValidation.validate(worker.getSpec()) != null) {
            var pods = source(context, ENGINE_PODS);
            worker.getStatus()
                    .pods()
                    .forEach(p -> pods.get(new ResourceID(p.pod(), ns))
                            .filter(claims::takenOverByOther)
                            .ifPresent(pod -> leave.remove(Long.parseUnsignedLong(p.instanceId()))));
            return leave;
        }
        enginePods(context, worker).stream()
                .filter(claims::takenOverByOther)
                .forEach(p -> instanceId(worker.getSpec(), p).ifPresent(leave::remove));
        return leave;
    }

    /** The replicas that exist but were not synced this round (not Ready). */
    private static Set<String> unsynced(Set<String> replicaPods, List<ReplicaOutcome> outcomes) {
        Set<String> out = new HashSet<>(replicaPods);
        outcomes.forEach(o -> out.remove(o.replica()));
        return out;
    }

    /**
     * The pods this KvWorker registered and no longer wants (its selector changed) that another KvWorker of its
     * KvIndexer takes over ({@link PodClaims#takenOverByOther}): their registrations stay for that one. A look-up
     * per such pod, and only while another KvWorker names the KvIndexer.
     */
    private Set<Long> leftToOthers(
            KvWorker worker, Context<KvWorker> context, PodClaims claims, DesiredRegistrations desired) {
        KvWorkerStatus status = worker.getStatus();
        if (!claims.hasOthers() || status == null || status.pods() == null) {
            return Set.of();
        }
        Set<Long> wanted = desired.instanceIds();
        String ns = worker.getMetadata().getNamespace();
        var pods = source(context, ENGINE_PODS);
        Set<Long> left = new HashSet<>();
        for (KvWorkerStatus.PodRegistration p : status.pods()) {
            long id = Long.parseUnsignedLong(p.instanceId());
            if (!wanted.contains(id)) {
                pods.get(new ResourceID(p.pod(), ns))
                        .filter(claims::takenOverByOther)
                        .flatMap(pod -> instanceId(worker.getSpec(), pod))
                        .filter(podId -> podId == id)
                        .ifPresent(left::add);
            }
        }
        return left;
    }

    /** Every target replica among {@code replicas} at once; metrics, logs and Events of each outcome. */
    private List<ReplicaOutcome> syncAll(
            KvWorker worker,
            KvIndexer kvi,
            Context<KvWorker> context,
            List<IndexerReplica> replicas,
            DesiredRegistrations desired,
            Set<Long> owned,
            Reregistrations reregister) {
        ReplicaSync sync = new ReplicaSync(services.client(), worker.getSpec(), known, key(worker), services.clock());
        int port = kvi.getSpec().getPort();
        List<IndexerReplica> targets = targetReplicas(kvi, replicas);
        // each replica as its own pod serves: during a rollout of a security change, old and new pods differ
        Map<String, ReplicaAccess> accesses =
                ReplicaAccesses.byReplica(context.getClient(), kvi, targets, services.cas());
        remember(kvi, context, accesses);
        known.retain(key(worker), targets.stream().map(IndexerReplica::pod).collect(Collectors.toSet()));
        List<ReplicaOutcome> outcomes = FanOut.map(
                targets,
                r -> sync.sync(
                        r.endpoint(port, accesses.get(r.pod())),
                        r.incarnation(),
                        desired,
                        owned,
                        reregister.on(r.pod())));
        report(worker, context, outcomes);
        return outcomes;
    }

    private void report(KvWorker worker, Context<KvWorker> context, List<ReplicaOutcome> outcomes) {
        EventRecorder events = services.events();
        OperatorMetrics metrics = services.metrics();
        if (!outcomes.isEmpty()) { // the calls are over: a replica gone meanwhile keeps no series
            IndexerPods.retainCallMetrics(context, INDEXER_PODS, metrics);
        }
        for (ReplicaOutcome o : outcomes) {
            metrics.registered(o.made());
            metrics.unregistered(o.removed());
            if (o.made() + o.removed() > 0) {
                atReplica(Level.INFO, worker, o.replica())
                        .addKeyValue("registered", o.made())
                        .addKeyValue("unregistered", o.removed())
                        .log("registrations applied");
            }
            if (o.made() > 0) {
                events.normal(worker, "Registered", o.made() + " engine rank(s) registered on " + o.replica());
            }
            if (o.removed() > 0) {
                events.normal(worker, "Unregistered", o.removed() + " engine rank(s) unregistered from " + o.replica());
            }
            if (o.failed()) {
                replicaFailed(NAME, worker, o.replica(), o.error(), "replica sync failed; retrying with back-off");
                events.warning(worker, "ReplicaSyncFailed", o.replica() + ": " + o.error());
            }
        }
    }

    /**
     * Replicas to register with: the Ready ones. When the KvIndexer waits for a minimum number of workers before it
     * turns Ready, running replicas are included too, or the wait could never end.
     */
    private static List<IndexerReplica> targetReplicas(KvIndexer kvi, List<IndexerReplica> replicas) {
        boolean gated =
                kvi.getSpec().getMinInitialWorkers() != null && kvi.getSpec().getMinInitialWorkers() > 0;
        return replicas.stream()
                .filter(r -> r.ready() || (gated && r.running()))
                .toList();
    }

    /** Remembers how {@code kvi}'s replicas are reached, for after it is deleted ({@link IndexerAddresses}). */
    private IndexerAddresses.Address remember(
            KvIndexer kvi, Context<KvWorker> context, Map<String, ReplicaAccess> accesses) {
        return addresses.remember(
                kvi.getMetadata().getNamespace(),
                kvi.getMetadata().getName(),
                kvi.getSpec().getPort(),
                accesses,
                () -> ReplicaAccesses.read(context.getClient(), kvi));
    }

    /** A KvIndexer whose replicas can be addressed: it exists and its spec was read. */
    private static boolean usable(KvIndexer kvi) {
        return kvi != null
                && kvi.getSpec() != null
                && kvi.getSpec().unreadable() == null
                && kvi.getSpec().getPort() != null;
    }

    private static List<Pod> enginePods(Context<KvWorker> context, KvWorker worker) {
        return source(context, ENGINE_PODS)
                .list(
                        worker.getMetadata().getNamespace(),
                        p -> LabelSelectors.matches(
                                worker.getSpec().getSelector(), p.getMetadata().getLabels()))
                .toList();
    }

    @SuppressWarnings("unchecked")
    private static InformerEventSource<Pod, KvWorker> source(Context<KvWorker> context, String name) {
        return (InformerEventSource<Pod, KvWorker>)
                context.eventSourceRetriever().getEventSourceFor(Pod.class, name);
    }

    /** The other KvWorkers of the same KvIndexer, not being deleted, with a usable spec. */
    private static PodClaims claims(KvWorker worker, Context<KvWorker> context) {
        String self = worker.getMetadata().getName();
        List<KvWorker> others = context
                .getPrimaryCache()
                .byIndex(
                        WorkerMappers.BY_INDEXER_REF,
                        WorkerMappers.indexerRefKey(worker).getFirst())
                .stream()
                .filter(w -> !self.equals(w.getMetadata().getName())
                        && w.getMetadata().getDeletionTimestamp() == null
                        && KvWorkerValidation.validate(w.getSpec()) == null)
                .toList();
        return new PodClaims(worker, others);
    }

    private static java.util.Optional<Long> instanceId(KvWorkerSpec spec, Pod pod) {
        try {
            return java.util.Optional.of(InstanceIds.of(pod, spec.getInstanceIdAnnotation()));
        } catch (IllegalArgumentException e) {
            return java.util.Optional.empty();
        }
    }

    private static Set<Long> ownedInstances(KvWorker worker) {
        Set<Long> owned = new HashSet<>();
        KvWorkerStatus status = worker.getStatus();
        if (status != null && status.pods() != null) {
            status.pods().forEach(p -> owned.add(Long.parseUnsignedLong(p.instanceId())));
        }
        return owned;
    }
}

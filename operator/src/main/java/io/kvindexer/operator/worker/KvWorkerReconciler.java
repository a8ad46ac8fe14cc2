package io.kvindexer.operator.worker;

import io.fabric8.kubernetes.api.model.Pod;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.kvindexer.operator.client.IndexerClient;
import io.kvindexer.operator.client.IndexerClientException;
import io.kvindexer.operator.client.IndexerEndpoint;
import io.kvindexer.operator.client.RegisteredWorker;
import io.kvindexer.operator.client.WorkerRegistration;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerSpec;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerStatus;
import io.kvindexer.operator.crd.v1alpha1.StatusWriter;
import io.kvindexer.operator.indexer.Backoff;
import io.kvindexer.operator.indexer.IndexerNames;
import io.kvindexer.operator.indexer.IndexerReplica;
import io.kvindexer.operator.indexer.KvIndexerReconciler;
import io.kvindexer.operator.observability.EventRecorder;
import io.kvindexer.operator.observability.OperatorMetrics;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * KvWorker → registrations. Level-triggered: desired = Ready engine pods × dp ranks; actual = each replica's
 * GET /workers; the difference is applied with /register and /unregister, every replica in parallel so one
 * unreachable replica never holds up the others (it is retried with back-off and reported as Degraded).
 * The finalizer (Cleaner) removes this KvWorker's engines from every replica when it is deleted.
 */
@ControllerConfiguration(name = KvWorkerReconciler.NAME)
public class KvWorkerReconciler implements Reconciler<KvWorker>, Cleaner<KvWorker> {
    public static final String NAME = "kvworker";
    public static final String ENGINE_PODS = "engine-pods";
    public static final String INDEXER_PODS = "worker-indexer-pods";
    public static final String INDEXERS = "kvindexers";
    private static final Logger LOG = LoggerFactory.getLogger(KvWorkerReconciler.class);

    private final IndexerClient client;
    private final KvWorkerStatusFactory statusFactory;
    private final EventRecorder events;
    private final OperatorMetrics metrics;
    private final Duration resync;
    private final Backoff backoff;
    /**
     * Instances this operator registered per KvWorker, kept in memory too: the status that also records them is read
     * from the informer cache, which lags (or loses a conflicting write) under fast pod churn, and an instance
     * missing from both would stay registered on the replicas forever.
     */
    private final Map<String, Set<Long>> registeredHere = new java.util.concurrent.ConcurrentHashMap<>();

    public KvWorkerReconciler(IndexerClient client, Clock clock, EventRecorder events, OperatorMetrics metrics,
            Duration resync) {
        this.client = client;
        this.statusFactory = new KvWorkerStatusFactory(clock);
        this.events = events;
        this.metrics = metrics;
        this.resync = resync;
        this.backoff = new Backoff(Duration.ofMillis(500), resync);
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
        var indexerPods = KvIndexerReconciler.indexerPodsInformer(INDEXER_PODS, KvWorker.class,
                WorkerMappers.indexerPodToWorkers(workers));
        var indexers = InformerEventSourceConfiguration.from(KvIndexer.class, KvWorker.class)
                .withName(INDEXERS)
                .withNamespacesInheritedFromController()
                .withSecondaryToPrimaryMapper(WorkerMappers.indexerToWorkers(workers))
                .withPrimaryToSecondaryMapper(WorkerMappers.workerToIndexer())
                .build();
        return List.of(new InformerEventSource<>(enginePods, context),
                new InformerEventSource<>(indexerPods, context),
                new InformerEventSource<>(indexers, context));
    }

    @Override
    public UpdateControl<KvWorker> reconcile(KvWorker worker, Context<KvWorker> context) {
        String key = key(worker);
        String invalid = KvWorkerValidation.validate(worker.getSpec());
        if (invalid != null) {
            LOG.atWarn().addKeyValue("kvworker", key).addKeyValue("reason", invalid).log("invalid spec");
            events.warning(worker, "InvalidSpec", invalid);
            StatusWriter.write(context.getClient(), worker, statusFactory.notReady(worker, "InvalidSpec", invalid, true));
            return UpdateControl.noUpdate();
        }
        KvWorkerSpec spec = worker.getSpec();
        KvIndexer kvi = context.getSecondaryResource(KvIndexer.class, INDEXERS).orElse(null);
        if (kvi == null || kvi.getSpec() == null || kvi.getSpec().getPort() == null) {
            String message = "KvIndexer " + spec.getIndexerRef() + " not found in namespace "
                    + worker.getMetadata().getNamespace();
            StatusWriter.write(context.getClient(), worker,
                    statusFactory.notReady(worker, "IndexerNotFound", message, false));
            return UpdateControl.<KvWorker>noUpdate().rescheduleAfter(resync);
        }
        DesiredRegistrations desired = DesiredRegistrations.of(spec, enginePods(context, worker));
        Set<Long> owned = ownedInstances(worker);
        owned.addAll(registeredHere.getOrDefault(key, Set.of()));
        Set<Long> replayChanged = replayChanged(worker, desired);
        List<IndexerReplica> targets = targetReplicas(kvi, context, worker);

        List<ReplicaOutcome> outcomes = inParallel(targets, r -> sync(worker, r.endpoint(kvi.getSpec().getPort()),
                desired, owned, replayChanged));
        report(worker, outcomes);
        boolean failed = outcomes.stream().anyMatch(ReplicaOutcome::failed);
        Set<Long> nowOwned = new HashSet<>();
        desired.targets().forEach(t -> nowOwned.add(t.instanceId()));
        if (failed) {
            nowOwned.addAll(owned); // some removals may not have happened yet
        }
        registeredHere.put(key, nowOwned);
        Duration next = failed ? backoff.next(key) : resync;
        if (!failed) {
            backoff.reset(key);
        }
        StatusWriter.write(context.getClient(), worker, statusFactory.status(worker, desired, outcomes));
        return UpdateControl.<KvWorker>noUpdate().rescheduleAfter(next);
    }

    @Override
    public DeleteControl cleanup(KvWorker worker, Context<KvWorker> context) {
        KvIndexer kvi = context.getSecondaryResource(KvIndexer.class, INDEXERS).orElse(null);
        if (kvi == null || worker.getSpec() == null || KvWorkerValidation.validate(worker.getSpec()) != null) {
            events.forget(worker);
            return DeleteControl.defaultDelete();
        }
        Set<Long> owned = ownedInstances(worker);
        owned.addAll(registeredHere.getOrDefault(key(worker), Set.of()));
        DesiredRegistrations.of(worker.getSpec(), enginePods(context, worker)).targets()
                .forEach(t -> owned.add(t.instanceId()));
        DesiredRegistrations none = new DesiredRegistrations(List.of(), Map.of());
        List<ReplicaOutcome> outcomes = inParallel(targetReplicas(kvi, context, worker),
                r -> sync(worker, r.endpoint(kvi.getSpec().getPort()), none, owned, Set.of()));
        report(worker, outcomes);
        if (outcomes.stream().anyMatch(ReplicaOutcome::failed)) {
            return DeleteControl.noFinalizerRemoval().rescheduleAfter(backoff.next(key(worker)));
        }
        backoff.reset(key(worker));
        registeredHere.remove(key(worker));
        events.forget(worker);
        LOG.atInfo().addKeyValue("kvworker", key(worker)).log("unregistered from every replica; finalizer removed");
        return DeleteControl.defaultDelete();
    }

    /** One replica: read /workers, plan, unregister first (a changed rank must be free), then register. */
    private ReplicaOutcome sync(KvWorker worker, IndexerEndpoint replica, DesiredRegistrations desired,
            Set<Long> owned, Set<Long> replayChanged) {
        KvWorkerSpec spec = worker.getSpec();
        List<WorkerRegistration> want = desired.targets().stream().flatMap(t -> t.registrations().stream()).toList();
        List<String> errors = new ArrayList<>();
        int made = 0;
        int removed = 0;
        List<RegisteredWorker> actual;
        try {
            actual = client.workers(replica);
        } catch (IndexerClientException e) {
            metrics.reconcileError(NAME);
            return new ReplicaOutcome(replica.name(), Set.of(), Set.of(), 0, 0, e.getMessage());
        }
        RegistrationPlan plan = RegistrationPlan.of(want, actual, spec.getModelName(), spec.getTenantId(), owned,
                replayChanged);
        Set<String> failedRanks = new HashSet<>();
        for (RegistrationPlan.Unregistration u : plan.toUnregister()) {
            try {
                client.unregister(replica, u.instanceId(), u.dpRank(), u.modelName(), u.tenantId());
                removed++;
            } catch (IndexerClientException e) {
                if (e.status() != 404) { // already gone is what we wanted
                    errors.add(e.getMessage());
                    failedRanks.add(u.instanceId() + "/" + u.dpRank());
                }
            }
        }
        for (WorkerRegistration r : plan.toRegister()) {
            if (failedRanks.contains(r.instanceId() + "/" + r.dpRank())) {
                continue;
            }
            try {
                client.register(replica, r, spec.getModelName(), spec.getTenantId(), spec.getBlockSize());
                made++;
            } catch (IndexerClientException e) {
                errors.add(e.getMessage());
                failedRanks.add(r.instanceId() + "/" + r.dpRank());
            }
        }
        metrics.registered(made);
        metrics.unregistered(removed);
        if (made + removed > 0) {
            LOG.atInfo().addKeyValue("kvworker", key(worker)).addKeyValue("replica", replica.name())
                    .addKeyValue("registered", made).addKeyValue("unregistered", removed).log("registrations applied");
        }
        Set<Long> registered = desired.targets().stream()
                .filter(t -> t.registrations().stream()
                        .noneMatch(r -> failedRanks.contains(r.instanceId() + "/" + r.dpRank())))
                .map(EngineTarget::instanceId).collect(Collectors.toSet());
        Set<Long> desiredIds = desired.targets().stream().map(EngineTarget::instanceId).collect(Collectors.toSet());
        Set<Long> leftovers = plan.toUnregister().stream()
                .filter(u -> failedRanks.contains(u.instanceId() + "/" + u.dpRank()))
                .map(RegistrationPlan.Unregistration::instanceId)
                .filter(id -> !desiredIds.contains(id)).collect(Collectors.toSet());
        if (!errors.isEmpty()) {
            metrics.reconcileError(NAME);
        }
        return new ReplicaOutcome(replica.name(), registered, leftovers, made, removed,
                errors.isEmpty() ? null : String.join("; ", errors));
    }

    private void report(KvWorker worker, List<ReplicaOutcome> outcomes) {
        for (ReplicaOutcome o : outcomes) {
            if (o.made() > 0) {
                events.normal(worker, "Registered", o.made() + " engine rank(s) registered on " + o.replica());
            }
            if (o.removed() > 0) {
                events.normal(worker, "Unregistered", o.removed() + " engine rank(s) unregistered from "
                        + o.replica());
            }
            if (o.failed()) {
                LOG.atWarn().addKeyValue("kvworker", key(worker)).addKeyValue("replica", o.replica())
                        .addKeyValue("error", o.error()).log("replica sync failed; retrying with back-off");
                events.warning(worker, "ReplicaSyncFailed", o.replica() + ": " + o.error());
            }
        }
    }

    /**
     * Replicas to register with: the Ready ones. When the KvIndexer waits for a minimum number of workers before it
     * turns Ready, running replicas are included too, or the wait could never end.
     */
    private static List<IndexerReplica> targetReplicas(KvIndexer kvi, Context<KvWorker> context, KvWorker worker) {
        boolean gated = kvi.getSpec().getMinInitialWorkers() != null && kvi.getSpec().getMinInitialWorkers() > 0;
        List<Pod> pods = source(context, INDEXER_PODS).list(worker.getMetadata().getNamespace(),
                p -> kvi.getMetadata().getName().equals(p.getMetadata().getLabels().get(IndexerNames.LABEL_INSTANCE)))
                .toList();
        return IndexerReplica.of(kvi, pods).stream().filter(r -> r.ready() || (gated && r.running())).toList();
    }

    private static List<Pod> enginePods(Context<KvWorker> context, KvWorker worker) {
        return source(context, ENGINE_PODS).list(worker.getMetadata().getNamespace(),
                p -> LabelSelectors.matches(worker.getSpec().getSelector(), p.getMetadata().getLabels())).toList();
    }

    @SuppressWarnings("unchecked")
    private static InformerEventSource<Pod, KvWorker> source(Context<KvWorker> context, String name) {
        return (InformerEventSource<Pod, KvWorker>) context.eventSourceRetriever().getEventSourceFor(Pod.class, name);
    }

    private static Set<Long> ownedInstances(KvWorker worker) {
        Set<Long> owned = new HashSet<>();
        KvWorkerStatus status = worker.getStatus();
        if (status != null && status.pods() != null) {
            status.pods().forEach(p -> owned.add(Long.parseUnsignedLong(p.instanceId())));
        }
        return owned;
    }

    /** Instances whose replay endpoint differs from what was registered (GET /workers does not show it). */
    private static Set<Long> replayChanged(KvWorker worker, DesiredRegistrations desired) {
        KvWorkerStatus status = worker.getStatus();
        if (status == null || status.pods() == null) {
            return Set.of();
        }
        Set<Long> changed = new HashSet<>();
        for (KvWorkerStatus.PodRegistration p : status.pods()) {
            long id = Long.parseUnsignedLong(p.instanceId());
            desired.targets().stream().filter(t -> t.instanceId() == id && p.registeredOn() != null
                            && !p.registeredOn().isEmpty() && p.endpoint() != null && p.endpoint().equals(t.endpoint())
                            && !Objects.equals(p.replayEndpoint(), t.replayEndpoint()))
                    .findFirst().ifPresent(t -> changed.add(id));
        }
        return changed;
    }

    private static <T> List<ReplicaOutcome> inParallel(List<T> items, Function<T, ReplicaOutcome> f) {
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<ReplicaOutcome>> futures = items.stream().map(i -> pool.submit(() -> f.apply(i))).toList();
            List<ReplicaOutcome> out = new ArrayList<>();
            for (Future<ReplicaOutcome> fu : futures) {
                try {
                    out.add(fu.get());
                } catch (Exception e) {
                    throw new IllegalStateException("replica sync crashed", e);
                }
            }
            return out;
        }
    }

    private static String key(KvWorker w) {
        return w.getMetadata().getNamespace() + "/" + w.getMetadata().getName();
    }
}

package io.kvindexer.indexer.registry;

import io.kvindexer.indexer.common.ServiceLimits;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.dump.SavedRegistration;
import io.kvindexer.indexer.index.FailedWrite;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.index.ModelIndex;
import io.kvindexer.indexer.ingest.ExactnessState;
import io.kvindexer.indexer.ingest.ListenerSnapshot;
import io.kvindexer.indexer.ingest.ListenerSpec;
import io.kvindexer.indexer.ingest.ListenerStatus;
import io.kvindexer.indexer.ingest.RunningListener;
import io.kvindexer.indexer.ingest.SequenceWatermark;
import io.kvindexer.indexer.ingest.StreamProgress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiFunction;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * Registrations: instance → (model, tenant) and its dp ranks, each with a running listener. Applies Dynamo's
 * registration rules (compatibility.md, HTTP API) in their order. One lock guards the bookkeeping, and nothing slow
 * runs under it: starting a listener never blocks, and an unregistered listener is stopped (which waits for its
 * poller) outside it. Only a registration of an instance whose listeners are stopping waits, for them.
 *
 * <p>Sequence watermarks are kept per (instance, rank) outside the registrations, so they survive
 * unregister/register (the documented behaviour), together with the endpoint they were learned from; those of the
 * last {@code --max-listeners} workers unregistered are kept ({@link KnownWatermarks}). A registration at another
 * endpoint is another engine process (a new pod, a new address) whose seqs start over: it gets a fresh watermark,
 * or its first batches would be dropped as stale. The same endpoint keeps it.
 */
public final class WorkerRegistry implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(WorkerRegistry.class.getName());
    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

    private final Indexers indexers;
    private final ListenerFactory listenerFactory;
    private final Map<Long, Instance> instances = new LinkedHashMap<>();
    private final KnownWatermarks watermarks;
    /** Instance id → pod name, when known; read by every query without the lock. */
    private final Map<Long, String> podNames = new ConcurrentHashMap<>();

    private final ExactnessBoard exactness = new ExactnessBoard();

    private final List<Runnable> observers = new CopyOnWriteArrayList<>();
    private final ServiceLimits limits;
    private final UnregisterGrace grace;
    /**
     * Instances whose unregistered ranks are stopping, outside the lock (a stop waits for the listener's poller):
     * done once their listeners are stopped and their blocks' removal is submitted. A registration of the same
     * instance waits for it, so that no new listener shares the stopping one's watermark, nor has its blocks taken
     * by the removal that follows the stop.
     */
    private final Map<Long, CompletableFuture<Void>> stopping = new HashMap<>();
    /**
     * Instances (with how many of their unregisters) whose listeners did not close within their stop wait: their
     * stops stay in {@link #stopping} until they do, and a registration is refused at once meanwhile.
     */
    private final Map<Long, Integer> stuck = new HashMap<>();
    /**
     * The removals of unregisters whose blocks are not removed yet (their listeners still stopping, or stuck): a state
     * cut leaves their blocks out ({@link LeavingWorkers}).
     */
    private final List<Removal> leaving = new ArrayList<>();
    /** non-null while startup recovery runs: what was unregistered meanwhile, applied when it installs */
    private RecoveryTombstones tombstones;

    private boolean closed;
    /** an /unregister was applied (or remembered during recovery): this replica knows something went */
    private volatile boolean everUnregistered;

    private volatile int listenerCapacity = Integer.MAX_VALUE;

    public WorkerRegistry(Indexers indexers, ListenerFactory listenerFactory) {
        this(indexers, listenerFactory, ServiceLimits.DEFAULTS);
    }

    public WorkerRegistry(Indexers indexers, ListenerFactory listenerFactory, ServiceLimits limits) {
        this(indexers, listenerFactory, limits, Duration.ZERO);
    }

    /** With {@code unregisterGrace} above zero, an unregistered worker's blocks are kept detached that long. */
    public WorkerRegistry(
            Indexers indexers, ListenerFactory listenerFactory, ServiceLimits limits, Duration unregisterGrace) {
        this.indexers = Objects.requireNonNull(indexers);
        this.listenerFactory = Objects.requireNonNull(listenerFactory);
        this.limits = Objects.requireNonNull(limits);
        this.grace = new UnregisterGrace(unregisterGrace, System::nanoTime);
        this.watermarks = new KnownWatermarks(limits.maxListeners());
        indexers.onFailedWrite(this::writeFailed);
    }

    /**
     * An index write that no listener delivered (recovery's adopt, a reattach, block expiry) failed and the index
     * dropped the worker rank's blocks: its listener stops saying exact, as for a failed batch of its own. On the
     * writer thread: the board needs no lock (the registry's lock may be held by one waiting for the writers).
     */
    private void writeFailed(FailedWrite f) {
        String why = "index write of " + f.index().modelName() + "/" + f.index().tenantId()
                + " that no listener delivered (recovery, a reattach or block expiry) failed (" + f.failure()
                + "); dropped the blocks of dp_rank "
                + Integer.toUnsignedString(f.worker().dpRank())
                + ", live events rebuild them";
        exactness.writeFailed(f.worker(), why);
        LOG.log(
                System.Logger.Level.WARNING,
                "instance {0}: {1}",
                Long.toUnsignedString(f.worker().instanceId()),
                why);
    }

    /**
     * What the process can really hold (its ZeroMQ sockets and open files), when below {@code --max-listeners}: a
     * registration above it is refused with a 409 like one above the flag, never a listener that fails later.
     */
    public void capListeners(int capacity) {
        listenerCapacity = capacity;
    }

    /** Called after every change of the registered instances (the startup gate counts them). */
    public void onChange(Runnable observer) {
        observers.add(observer);
    }

    public void register(Registration r) throws RegistryException {
        register(r, SequenceWatermark.UNSET);
    }

    /**
     * Registers like {@link #register(Registration)}, resuming from a known seq watermark {@code watermark} (u64;
     * {@link SequenceWatermark#UNSET}: none, the same as {@code register(r)}), which is taken when the registration
     * has none yet at that endpoint. A listener that starts with a watermark asks the engine's replay endpoint for
     * every batch after it as soon as its SUB connection is up (not only when a live batch shows a gap); what the
     * engine no longer has is an unrecoverable gap (that rank's blocks dropped, counted, shown in {@code /workers}).
     * The current watermarks are read with {@link #watermark} and {@link #export}.
     */
    public void register(Registration r, long watermark) throws RegistryException {
        while (true) {
            CompletableFuture<Void> stops;
            boolean held;
            synchronized (this) {
                stops = stopsOf(r.instanceId());
                if (stops == null) {
                    registerLocked(r, watermark, null, false);
                    break;
                }
                held = stuck.containsKey(r.instanceId()); // already waited for in vain: no second wait
            }
            // outside the lock: the instance's old listeners are stopping (an /unregister just now)
            if (held
                    || !WriterWait.done(
                            stops,
                            LOG,
                            "instance {0} is still being unregistered: {1}",
                            Long.toUnsignedString(r.instanceId()))) {
                throw new RegistryException(
                        RegistryException.Kind.CONFLICT,
                        "instance " + Long.toUnsignedString(r.instanceId())
                                + " is still being unregistered; register it again later");
            }
        }
        notifyObservers();
    }

    /** The stops in flight of {@code instanceId}'s ranks, or null when none is (caller holds the lock). */
    private CompletableFuture<Void> stopsOf(long instanceId) {
        CompletableFuture<Void> stops = stopping.get(instanceId);
        if (stops != null && stops.isDone()) {
            stopping.remove(instanceId);
            return null;
        }
        return stops;
    }

    /**
     * Dynamo's rules, then the listener. A watermark other than {@link SequenceWatermark#UNSET} is a restored one: it
     * is taken when the registration has none yet, with what is known of its batch ({@code restoredBatch}, null:
     * nothing) and whether this replica's own snapshot gave it ({@code fromSnapshot}). Caller holds the lock and
     * notifies the observers after it.
     */
    private void registerLocked(
            Registration r,
            long restoredWatermark,
            SavedRegistration.WatermarkBatch restoredBatch,
            boolean fromSnapshot)
            throws RegistryException {
        if (closed) {
            throw new RegistryException(RegistryException.Kind.CONFLICT, "indexer is shutting down");
        }
        if (stopsOf(r.instanceId()) != null) { // (register waits for them: a restore at the wrong time)
            throw new RegistryException(
                    RegistryException.Kind.CONFLICT,
                    "instance " + Long.toUnsignedString(r.instanceId()) + " is still being unregistered");
        }
        Instance existing = instances.get(r.instanceId());
        RegistrationRules.check(r, existing, instances.values(), limits, listenerCapacity);
        ModelIndex index;
        try {
            index = indexers.getOrCreate(r.modelName(), r.tenantId(), r.blockSize());
        } catch (Indexers.BlockSizeMismatchException e) {
            throw new RegistryException(RegistryException.Kind.CONFLICT, e.getMessage());
        }
        Instance inst = existing != null ? existing : new Instance(r.instanceId(), r.modelName(), r.tenantId());
        WorkerKey key = new WorkerKey(r.instanceId(), r.dpRank());
        ListenerSpec spec = new ListenerSpec(r.instanceId(), r.dpRank(), r.endpoint(), r.replayEndpoint());
        LearnedWatermark before = watermarks.get(key);
        LearnedWatermark learned = watermarks.register(key, r.endpoint());
        // the same stream registered again after /unregister, which dropped what its batches so far had stored
        long resumedAfter = learned == before ? learned.watermark().get() : SequenceWatermark.UNSET;
        if (restoredWatermark != SequenceWatermark.UNSET && learned.watermark().get() == SequenceWatermark.UNSET) {
            restoreWatermark(learned.watermark(), restoredWatermark, restoredBatch, fromSnapshot);
        }
        UnregisterGrace.Reattached back = grace.enabled() ? grace.reattach(r) : null;
        if (back != null) {
            // before the listener's first batch, on the same writer; their TTL runs on from their last store
            index.submitRecovered(key, back.ops(), back.times(), back.salts());
            if (resumedAfter != SequenceWatermark.UNSET) {
                // nobody listened while it was unregistered: marked as after a restart from the grace file, so that
                // a listener without a replay endpoint waits for the engine's next batch before it is exact
                SequenceWatermark w = learned.watermark();
                w.restore(resumedAfter, w.watermarkBatch(), true);
            }
        }
        Rank rank = new Rank(
                spec,
                listenerFactory.start(spec, learned.watermark(), grace.watch(new IndexSink(index))),
                learned.watermark());
        if (resumedAfter != SequenceWatermark.UNSET && back == null) {
            // its stream goes on from the watermark, so those blocks are never replayed: the index may under-report
            // the worker until the engine clears, restarts, or turns its cache over (the degraded hold)
            rank.exactness.blocksDropped(
                    "registered again at the same endpoint: /unregister dropped the blocks of batches up to seq "
                            + Long.toUnsignedString(resumedAfter)
                            + ", which are not replayed (--unregister-grace keeps them for a comeback)",
                    r.dpRank());
        }
        inst.ranks.put(r.dpRank(), rank);
        exactness.put(inst.id, inst.ranks.values());
        if (r.podName() != null) {
            inst.podName = r.podName();
            podNames.put(r.instanceId(), r.podName());
        }
        instances.put(r.instanceId(), inst);
        LOG.log(
                System.Logger.Level.INFO,
                "registered instance {0} dp_rank {1} at {2} for model={3} tenant={4}",
                Long.toUnsignedString(r.instanceId()),
                Integer.toUnsignedString(r.dpRank()),
                r.endpoint(),
                r.modelName(),
                r.tenantId());
    }

    /**
     * The forms of {@code /unregister} (compatibility.md, HTTP API): with a rank one listener, without one the whole
     * instance; with a tenant only if the instance's key matches, without one if its model does. Dynamo's code
     * ignores a rank sent without a tenant; the reference document names it the rank to remove, and so do we.
     */
    public void unregister(long instanceId, String model, String tenant, Integer dpRank) throws RegistryException {
        String id = Long.toUnsignedString(instanceId);
        Removal removal;
        CompletableFuture<Void> stopped = new CompletableFuture<>();
        synchronized (this) {
            Instance inst = instances.get(instanceId);
            if (tombstones != null) {
                tombstones.add(instanceId, model, tenant, dpRank); // recovery may still bring it: it goes too
                everUnregistered = true;
            }
            if (inst == null && tombstones != null) {
                LOG.log(
                        System.Logger.Level.INFO,
                        "unregister of instance {0} during recovery: whatever recovery brings of it is dropped",
                        id);
                return;
            }
            if (inst == null) {
                throw new RegistryException(RegistryException.Kind.NOT_FOUND, "instance " + id + " not found");
            }
            boolean keyMatches = tenant != null ? inst.sameKey(model, tenant) : inst.model.equals(model);
            if (!keyMatches) {
                throw new RegistryException(
                        RegistryException.Kind.NOT_FOUND,
                        "instance " + id + " is registered for model=" + inst.model + " tenant=" + inst.tenant);
            }
            if (dpRank != null) {
                Rank rank = inst.ranks.get(dpRank);
                if (rank == null) {
                    throw new RegistryException(
                            RegistryException.Kind.NOT_FOUND,
                            "instance " + id + " dp_rank " + Integer.toUnsignedString(dpRank) + " not found");
                }
                if (inst.ranks.size() > 1) {
                    inst.ranks.remove(dpRank);
                    exactness.put(inst.id, inst.ranks.values());
                    removal = new Removal(inst, Map.of(dpRank, rank), false);
                } else {
                    removal = takeInstance(inst);
                }
            } else {
                removal = takeInstance(inst);
            }
            everUnregistered = true;
            removal.ranks().keySet().forEach(r -> watermarks.unregistered(new WorkerKey(instanceId, r), grace::holds));
            leaving.add(removal);
            stopping.merge(instanceId, stopped, (a, b) -> CompletableFuture.allOf(a, b));
        }
        CompletableFuture<Void> removed = DONE;
        List<Rank> open = List.of();
        try {
            // outside the lock: a stop waits for the listener's poller (up to 30 s behind a replay), and every other
            // registration and /workers read would wait with it; this instance's registrations wait (stopsOf)
            open = stopAll(removal.ranks().values());
            if (open.isEmpty()) {
                synchronized (this) {
                    removed = removeBlocks(removal); // after the stop: no event of theirs can follow the removal
                }
            }
        } finally {
            if (open.isEmpty()) {
                stopDone(instanceId, stopped);
            }
        }
        if (!open.isEmpty()) {
            removeWhenClosed(removal, open, stopped);
        }
        // a query sent after /unregister answered no longer names the worker (an index dropped whole needs no wait)
        WriterWait.done(removed, LOG, "the blocks of instance {0} are still being removed: {1}", id);
        // what was removed, as the registration's line names it: the request may leave out the tenant and the rank
        LOG.log(
                System.Logger.Level.INFO,
                "unregistered instance {0} dp_rank {1} for model={2} tenant={3}",
                id,
                removal.ranks().keySet().stream()
                        .sorted(Integer::compareUnsigned) // the ranks' map has no order of its own
                        .map(Integer::toUnsignedString)
                        .collect(Collectors.joining(",")),
                removal.inst().model,
                removal.inst().tenant);
        notifyObservers();
    }

    /** The stop of an unregister is over (its blocks' removal submitted): a registration of the instance may go on. */
    private void stopDone(long instanceId, CompletableFuture<Void> stopped) {
        stopped.complete(null);
        synchronized (this) {
            stopsOf(instanceId); // forgotten once done
        }
    }

    /**
     * Some listeners of {@code removal} did not close within their stop wait: a replay holds them and may still apply
     * the batch in its hands, which a removal now would leave behind for good. Their blocks are removed once they
     * have closed, and until then the instance stays {@link #stopping} (a registration of it is refused, 409). The
     * streams close on their pollers, which take no lock of the registry's: the removal runs on a thread of its own.
     */
    private void removeWhenClosed(Removal removal, List<Rank> open, CompletableFuture<Void> stopped) {
        long instanceId = removal.inst().id;
        String id = Long.toUnsignedString(instanceId);
        synchronized (this) {
            stuck.merge(instanceId, 1, Integer::sum);
        }
        LOG.log(
                System.Logger.Level.WARNING,
                "instance {0}: {1} of its listeners did not close within their stop wait (a replay holds them); its"
                        + " blocks are removed once they close, and until then it cannot be registered again",
                id,
                open.size());
        CompletableFuture.allOf(open.stream().map(r -> r.listener.closed()).toArray(CompletableFuture[]::new))
                .whenCompleteAsync(
                        (closed, failure) -> {
                            try {
                                synchronized (this) {
                                    removeBlocks(removal);
                                }
                                LOG.log(
                                        System.Logger.Level.INFO,
                                        "instance {0}: its stuck listeners closed; their blocks are removed",
                                        id);
                            } finally {
                                synchronized (this) {
                                    stuck.computeIfPresent(instanceId, (k, n) -> n == 1 ? null : n - 1);
                                }
                                stopDone(instanceId, stopped);
                                notifyObservers();
                            }
                        },
                        task -> Thread.ofVirtual().name("unregister-" + id).start(task));
    }

    /**
     * What one {@code /unregister} takes away: {@code ranks} of {@code inst} ({@code whole}: all of them, the instance
     * is gone). Their listeners are stopped outside the lock, then their blocks removed ({@link #removeBlocks}).
     */
    private record Removal(Instance inst, Map<Integer, Rank> ranks, boolean whole) {}

    /** Takes the instance out of the registry (caller holds the lock); its listeners are stopped after. */
    private Removal takeInstance(Instance inst) {
        instances.remove(inst.id);
        podNames.remove(inst.id);
        exactness.remove(inst.id);
        Removal removal = new Removal(inst, Map.copyOf(inst.ranks), true);
        inst.ranks.clear();
        return removal;
    }

    /**
     * Once the listeners are stopped (no event can arrive after the removal): drops the blocks, then, for a whole
     * instance, the index when no instance uses its key any more (decided now, not when the stop began: one may have
     * been registered meanwhile). Caller holds the lock; returns when the blocks are gone.
     */
    private CompletableFuture<Void> removeBlocks(Removal removal) {
        leaving.removeIf(r -> r == removal); // from here on a cut sees the blocks removed (it flushes the writers)
        Instance inst = removal.inst();
        Map<WorkerKey, String> endpoints = new HashMap<>();
        removal.ranks().forEach((r, rank) -> endpoints.put(new WorkerKey(inst.id, r), rank.spec.endpoint()));
        CompletableFuture<Void> removed = indexers.get(inst.model, inst.tenant)
                .map(ix -> {
                    detach(ix, endpoints);
                    if (!removal.whole()) {
                        return ix.removeWorker(endpoints.keySet().iterator().next());
                    }
                    return ix.removeInstance(inst.id);
                })
                .orElse(DONE);
        if (removal.whole() && instances.values().stream().noneMatch(i -> i.sameKey(inst.model, inst.tenant))) {
            indexers.remove(inst.model, inst.tenant);
            return DONE; // nobody can query the dropped index
        }
        return removed;
    }

    /**
     * Stops {@code ranks} all at once: each waits for its poller to close its connection, and one after the other
     * 4,096 of them took seconds of a shutdown's grace period. Returns those that did not close within their wait.
     */
    private static List<Rank> stopAll(Collection<Rank> ranks) {
        if (ranks.size() == 1) {
            Rank rank = ranks.iterator().next();
            return rank.stop() ? List.of() : List.of(rank);
        }
        List<Rank> open = new CopyOnWriteArrayList<>();
        try (ExecutorService stops = Executors.newVirtualThreadPerTaskExecutor()) {
            ranks.forEach(rank -> stops.execute(() -> {
                if (!rank.stop()) {
                    open.add(rank);
                }
            }));
        }
        return List.copyOf(open);
    }

    /**
     * Every registration with its watermark. Read before the trees (the caller flushes the index writers after
     * this), so a tree holds at least every batch up to the watermark saved with it; the few that arrive between
     * are replayed again after a restore, which leaves the same state (a store or removal applied twice in order).
     * Taken after the unregisters in flight have submitted their removals (waited for outside the lock, bounded), so
     * that the cut reflects them (with {@code --unregister-grace}, their blocks go beside it); the blocks of those
     * still going at the deadline are left out of it ({@link Cut#leaving}).
     */
    public List<SavedRegistration> export() {
        return export(System.nanoTime() + TimeUnit.SECONDS.toNanos(WriterWait.TIMEOUT_SECONDS));
    }

    /**
     * {@link #export()} waiting for the unregisters in flight until {@code deadlineNanos} ({@link System#nanoTime})
     * at most: the whole cut has one deadline, and what it waits for here leaves that much less for the rest. An
     * instance whose stream already outlived its stop wait (a stuck replay) is not waited for again: it may stay
     * stuck for good, and each cut would spend its whole deadline on it.
     */
    public List<SavedRegistration> export(long deadlineNanos) {
        return cut(deadlineNanos).registrations();
    }

    /**
     * What a snapshot saves of the registry, read at one moment: the registrations with their watermarks, the
     * workers {@code --unregister-grace} keeps detached (none without it), and the workers whose blocks the cut's
     * walk leaves out: those still being unregistered (no registration of the cut vouches for them, and a restore
     * would keep them with no listener to remove them) and the degraded ones ({@link #degradedLocked}).
     */
    public record Cut(List<SavedRegistration> registrations, List<DetachedWorker> detached, LeavingWorkers leaving) {}

    /** {@link #export(long)} with the detached and the leaving workers read under the same lock hold. */
    public Cut cut(long deadlineNanos) {
        CompletableFuture<Void> stops;
        int instances;
        synchronized (this) {
            stopping.values().removeIf(CompletableFuture::isDone);
            List<CompletableFuture<Void>> inFlight = new ArrayList<>();
            stopping.forEach((id, stop) -> {
                if (!stuck.containsKey(id)) {
                    inFlight.add(stop);
                }
            });
            if (inFlight.isEmpty()) {
                return cutLocked();
            }
            instances = inFlight.size();
            stops = CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new));
        }
        // (past the bound the cut is taken anyway: a snapshot that waited for good would be worse)
        try {
            stops.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (ExecutionException | TimeoutException e) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "a state cut waited for the unregisters of {0} instances in vain: {1}",
                    instances,
                    e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (this) {
            return cutLocked();
        }
    }

    private Cut cutLocked() {
        List<DetachedWorker> detached = grace.enabled()
                ? grace.export(key -> {
                    LearnedWatermark learned = watermarks.get(key);
                    if (learned == null) {
                        return new UnregisterGrace.SavedWatermark(SequenceWatermark.UNSET, null);
                    }
                    long seq = learned.watermark().get();
                    return new UnregisterGrace.SavedWatermark(seq, savedBatch(learned.watermark(), seq));
                })
                : List.of();
        Set<WorkerKey> degraded = degradedLocked();
        return new Cut(exportLocked(degraded), detached, leavingLocked(degraded));
    }

    /**
     * The registered workers whose listener is {@code degraded}: this replica holds less of them than their engines
     * do, and cannot say what. A cut carries each as a registration without a watermark and without its blocks, so
     * a replica restored from it joins the engine afresh (exact only if the engine's buffer reaches back to seq 0)
     * instead of resuming after the watermark and taking the partial blocks for the whole.
     */
    private Set<WorkerKey> degradedLocked() {
        Set<WorkerKey> out = new HashSet<>();
        for (Instance inst : instances.values()) {
            inst.ranks.forEach((r, rank) -> {
                if (rank.exactness.read().state() == ExactnessState.DEGRADED) {
                    out.add(new WorkerKey(inst.id, r));
                }
            });
        }
        return out;
    }

    private LeavingWorkers leavingLocked(Set<WorkerKey> degraded) {
        if (leaving.isEmpty() && degraded.isEmpty()) {
            return LeavingWorkers.NONE;
        }
        Set<Long> whole = new HashSet<>();
        Set<WorkerKey> ranks = new HashSet<>(degraded);
        for (Removal r : leaving) {
            if (r.whole()) {
                whole.add(r.inst().id);
            } else {
                r.ranks().keySet().forEach(rank -> ranks.add(new WorkerKey(r.inst().id, rank)));
            }
        }
        return new LeavingWorkers(whole, ranks);
    }

    private List<SavedRegistration> exportLocked(Set<WorkerKey> degraded) {
        List<SavedRegistration> out = new ArrayList<>();
        for (Instance inst : instances.values()) {
            ModelIndex index = indexers.get(inst.model, inst.tenant).orElse(null);
            if (index == null) {
                continue;
            }
            inst.ranks.forEach((r, rank) -> {
                WorkerKey key = new WorkerKey(inst.id, r);
                // a degraded worker goes without its watermark: the restored replica joins its engine afresh
                LearnedWatermark learned = degraded.contains(key) ? null : watermarks.get(key);
                // the mark before the seq: a batch passing between them sets the seq first, so an unmarked seq here
                // is one a batch proved (a marked one may be proven already: the reader only waits one batch more)
                boolean fromSnapshot = learned != null && learned.watermark().restoredFromSnapshot();
                long seq = learned == null
                        ? SequenceWatermark.UNSET
                        : learned.watermark().get();
                out.add(new SavedRegistration(
                        inst.id,
                        r,
                        rank.spec.endpoint(),
                        rank.spec.replayEndpoint(),
                        inst.podName,
                        inst.model,
                        inst.tenant,
                        index.blockSize(),
                        seq,
                        learned == null ? null : savedBatch(learned.watermark(), seq),
                        fromSnapshot));
            });
        }
        return out;
    }

    /** Startup recovery begins: what is unregistered from now on is remembered until {@link #finishRecovery}. */
    public synchronized void beginRecovery() {
        if (tombstones == null) {
            tombstones = new RecoveryTombstones();
        }
    }

    /** Whether any {@code /unregister} took effect since the start ({@code BinaryDump.BLANK_HEADER}). */
    public boolean everUnregistered() {
        return everUnregistered;
    }

    public synchronized boolean isRecovering() {
        return tombstones != null;
    }

    /**
     * Startup recovery ends. Under the lock, so that an unregister comes wholly before or after: {@code installTree}
     * puts the recovered trees into the indexes, whatever was unregistered meanwhile is removed from them, and the
     * saved registrations that were neither unregistered nor registered anew meanwhile are registered with their
     * watermarks (their listeners ask the engines for what came after). A saved one that cannot come back (registered
     * anew under another model, tenant or block size, or refused) takes its blocks with it: no listener of its
     * (model, tenant) would ever correct them. So does one registered anew at another endpoint: another engine process,
     * whose listener learns its history afresh and would take the old one's blocks for its own. Returns how many were
     * restored.
     */
    public int finishRecovery(List<SavedRegistration> saved, Runnable installTree) {
        return finishRecovery(saved, Set.of(), List.of(), installTree);
    }

    /**
     * {@link #finishRecovery(List, Runnable)} that also takes back the workers a snapshot saved detached ({@code
     * --unregister-grace}), each with its watermark, so that one registering again within its grace period gets its
     * blocks back and its stream replayed from where it was. One registered anew meanwhile, or unregistered, is not.
     * {@code fromSnapshot}: the ranks of {@code saved} whose watermark is a snapshot's (this replica's own, or one a
     * peer's dump marked {@link SavedRegistration#fromSnapshot}; the others a peer's current one); a listener without
     * a replay endpoint is not exact from such a watermark until its engine's next batch, as nobody may have listened
     * since the snapshot was written. The detached workers come from a snapshot's grace
     * file, so theirs are such watermarks too.
     */
    public int finishRecovery(
            List<SavedRegistration> saved,
            Set<WorkerKey> fromSnapshot,
            List<DetachedWorker> detached,
            Runnable installTree) {
        int restored = 0;
        List<ModelIndex> unnamed;
        synchronized (this) {
            RecoveryTombstones dead = tombstones != null ? tombstones : new RecoveryTombstones();
            tombstones = null;
            installTree.run();
            dead.removeFrom(indexers);
            restoreDetached(detached, dead);
            Set<ModelIndex> left = new HashSet<>(); // the indexes a saved worker did not come back to
            for (SavedRegistration s : saved) {
                if (dead.covers(s.instanceId(), s.modelName(), s.tenantId(), s.dpRank())) {
                    indexers.get(s.modelName(), s.tenantId()).ifPresent(left::add);
                    continue;
                }
                if (restore(s, fromSnapshot.contains(new WorkerKey(s.instanceId(), s.dpRank())))) {
                    restored++;
                } else if (!continuedByLive(s)) {
                    indexers.get(s.modelName(), s.tenantId()).ifPresent(ix -> {
                        left.add(ix);
                        ix.removeWorker(new WorkerKey(s.instanceId(), s.dpRank()));
                    });
                }
            }
            // only the indexes a worker left during recovery: an index made meanwhile without one is not recovery's
            unnamed = indexers.all().stream()
                    .filter(ix -> !named(ix))
                    .filter(ix -> left.contains(ix) || dead.names(ix.modelName(), ix.tenantId()))
                    .toList();
        }
        if (!unnamed.isEmpty()) {
            dropEmptied(unnamed);
        }
        notifyObservers();
        return restored;
    }

    /**
     * Once the removals recovery submitted are applied, drops those of {@code unnamed} (indexes no registration named
     * after recovery) that hold no block now: the last worker of each was unregistered during recovery, or could not
     * be restored, and an unregister after recovery would have dropped it. One that holds blocks stays: a peer's
     * blocks of workers not registered here yet (a Dynamo peer sends no registrations).
     */
    private void dropEmptied(List<ModelIndex> unnamed) {
        if (!WriterWait.done(
                indexers.flushAll(), LOG, "indexes emptied by recovery are kept, as their writes wait: {0}", "")) {
            return;
        }
        synchronized (this) {
            for (ModelIndex ix : unnamed) {
                if (!named(ix)
                        && ix.stats().memberships() == 0
                        && indexers.get(ix.modelName(), ix.tenantId()).orElse(null) == ix) {
                    indexers.remove(ix.modelName(), ix.tenantId());
                    LOG.log(
                            System.Logger.Level.INFO,
                            "dropped index model={0} tenant={1}: recovery left it no worker and no block",
                            ix.modelName(),
                            ix.tenantId());
                }
            }
        }
    }

    /** Whether a registration names {@code index}'s (model, tenant) now. Caller holds the lock. */
    private boolean named(ModelIndex index) {
        return instances.values().stream().anyMatch(i -> i.sameKey(index.modelName(), index.tenantId()));
    }

    /** Caller holds the lock. The detached workers neither registered nor unregistered during recovery. */
    private void restoreDetached(List<DetachedWorker> detached, RecoveryTombstones dead) {
        List<DetachedWorker> back = new ArrayList<>();
        for (DetachedWorker w : detached) {
            SavedRegistration s = w.registration();
            Instance live = instances.get(s.instanceId());
            if (!grace.enabled()
                    || dead.covers(s.instanceId(), s.modelName(), s.tenantId(), s.dpRank())
                    || (live != null && live.ranks.containsKey(s.dpRank()))) {
                continue;
            }
            back.add(w);
            // the same stream continues at the same endpoint: its comeback replays from here (a grace file's
            // watermark is as old as the snapshot beside it)
            watermarks.restoreUnregistered(
                    new WorkerKey(s.instanceId(), s.dpRank()),
                    s.endpoint(),
                    restored -> restoreWatermark(restored, s.watermark(), s.watermarkBatch(), true),
                    grace::holds);
        }
        grace.restore(back);
    }

    /**
     * A saved watermark back in a registration's {@link SequenceWatermark}, with its batch when the cut knew it, so
     * that the first replay after the restore can show an engine restart by that batch (a version 2 or 3 dump has
     * none: the seq alone, as before), and whether it came from this replica's own snapshot.
     */
    private static void restoreWatermark(
            SequenceWatermark watermark, long seq, SavedRegistration.WatermarkBatch batch, boolean fromSnapshot) {
        watermark.restore(
                seq,
                batch == null ? null : new SequenceWatermark.LastBatch(seq, batch.digest(), batch.timestamp()),
                fromSnapshot);
    }

    /**
     * What a cut saves of the batch at {@code seq}, the watermark it read: null when that batch is not known (or the
     * watermark moved on since it was read).
     */
    private static SavedRegistration.WatermarkBatch savedBatch(SequenceWatermark watermark, long seq) {
        SequenceWatermark.LastBatch batch = watermark.watermarkBatch();
        return batch == null || batch.seq() != seq
                ? null
                : new SavedRegistration.WatermarkBatch(batch.digest(), batch.timestamp());
    }

    /**
     * Caller holds the lock. False when the registration was made anew meanwhile or cannot be made. {@code
     * fromSnapshot}: its watermark is this replica's own snapshot's.
     */
    private boolean restore(SavedRegistration s, boolean fromSnapshot) {
        Instance live = instances.get(s.instanceId());
        if (live != null && live.ranks.containsKey(s.dpRank())) {
            if (!continuedByLive(s)) {
                return false; // the saved watermark counts batches of a tree the new registration does not get
            }
            // registered anew during recovery: its listener has applied nothing yet (the gate is shut), so at the
            // same endpoint it continues from the saved watermark
            LearnedWatermark learned = watermarks.get(new WorkerKey(s.instanceId(), s.dpRank()));
            if (learned != null
                    && learned.endpoint().equals(s.endpoint())
                    && learned.watermark().get() == SequenceWatermark.UNSET) {
                restoreWatermark(learned.watermark(), s.watermark(), s.watermarkBatch(), fromSnapshot);
            }
            return false;
        }
        try {
            registerLocked(
                    new Registration(
                            s.instanceId(),
                            s.endpoint(),
                            s.modelName(),
                            s.tenantId(),
                            s.blockSize(),
                            s.dpRank(),
                            s.replayEndpoint(),
                            s.podName()),
                    s.watermark(),
                    s.watermarkBatch(),
                    fromSnapshot);
            return true;
        } catch (RegistryException | IllegalArgumentException e) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "recovered registration of instance {0} dp_rank {1} not restored: {2}",
                    Long.toUnsignedString(s.instanceId()),
                    Integer.toUnsignedString(s.dpRank()),
                    e.getMessage());
            return false;
        }
    }

    /**
     * Caller holds the lock. Whether the rank of {@code s} is registered now at the endpoint it was saved with, under
     * the same (model, tenant) and block size, so that its listener continues the saved rank's blocks: at another
     * endpoint it follows another engine process, which would take the old one's blocks for its own.
     */
    private boolean continuedByLive(SavedRegistration s) {
        Instance live = instances.get(s.instanceId());
        Rank rank = live == null ? null : live.ranks.get(s.dpRank());
        return rank != null
                && rank.spec.endpoint().equals(s.endpoint())
                && live.sameKey(s.modelName(), s.tenantId())
                && indexers.get(s.modelName(), s.tenantId())
                        .map(ix -> ix.blockSize() == s.blockSize())
                        .orElse(false);
    }

    /** With a grace period, keeps the blocks of stopped {@code workers} (by their endpoints) before they go. */
    private void detach(ModelIndex index, Map<WorkerKey, String> workers) {
        if (grace.enabled()) {
            grace.detach(index, workers);
        }
    }

    /** Worker ranks whose detached blocks met {@code outcome} so far ({@code --unregister-grace}; 0 without it). */
    public synchronized long graceOutcomes(GraceOutcome outcome) {
        grace.expire(); // counts what outlived the grace period by now
        return grace.outcomes(outcome);
    }

    /** Memberships kept detached by {@code --unregister-grace} now (0 without it). */
    public synchronized int detachedMemberships() {
        return grace.memberships();
    }

    /** {@code GET /workers}: optional exact-match filters; instances without listeners are hidden. */
    public synchronized List<WorkerView> list(String model, String tenant) {
        List<WorkerView> out = new ArrayList<>();
        for (Instance inst : instances.values()) {
            if ((model != null && !model.equals(inst.model))
                    || (tenant != null && !tenant.equals(inst.tenant))
                    || inst.ranks.isEmpty()) {
                continue;
            }
            SortedMap<Integer, ListenerSnapshot> listeners = new TreeMap<>(Integer::compareUnsigned);
            SortedMap<Integer, StreamProgress> progress = new TreeMap<>(Integer::compareUnsigned);
            inst.ranks.forEach((r, rank) -> {
                listeners.put(r, rank.snapshot());
                progress.put(r, rank.watermark.progress());
            });
            int blockSize = indexers.get(inst.model, inst.tenant)
                    .map(ModelIndex::blockSize)
                    .orElse(0);
            out.add(new WorkerView(
                    inst.id,
                    WorkerView.aggregate(listeners.values()),
                    inst.model,
                    inst.tenant,
                    blockSize,
                    listeners,
                    progress,
                    inst.podName));
        }
        return out;
    }

    /**
     * True when every listener of the instance is exact now (what a query answer's {@code exact} says); false for
     * an instance nobody listens to (blocks recovered before its registration). A map lookup, no lock.
     */
    public boolean exact(long instanceId) {
        return exactness.exact(instanceId);
    }

    /**
     * Running listeners (active or pending) per exactness, every state present. A failed or paused listener reads
     * no stream (its reading is {@code degraded} for as long, whatever its stream showed): {@link #listenerCounts}
     * counts it.
     */
    public synchronized Map<ExactnessState, Integer> exactnessCounts() {
        return countRanks(
                ExactnessState.class, true, (rank, l) -> rank.exactness.read().state());
    }

    /** The pod an instance was registered with; null when unknown or not registered. */
    public String podName(long instanceId) {
        return podNames.get(instanceId);
    }

    /** Registered instances with at least one listener (what DYN_ROUTER_MIN_INITIAL_WORKERS counts). */
    public synchronized int instanceCount() {
        return (int) instances.values().stream().filter(i -> !i.ranks.isEmpty()).count();
    }

    /** Listener count per status; every status present. */
    public synchronized Map<ListenerStatus, Integer> listenerCounts() {
        grace.expire(); // scraped regularly: frees what outlived the grace period
        return countRanks(ListenerStatus.class, false, (rank, l) -> l.status());
    }

    /**
     * Running listeners (active or pending) per state of their engine connection, every state present: {@code
     * connected}, {@code disconnected} (was up, lost) and {@code not_connected} (never up yet). Paused and failed
     * listeners have no socket: {@link #listenerCounts} counts them.
     */
    public synchronized Map<ListenerSnapshot.Connection, Integer> connectionCounts() {
        return countRanks(ListenerSnapshot.Connection.class, true, (rank, l) -> l.connection());
    }

    /**
     * Every rank's listener (only the running ones, active or pending, when {@code runningOnly}) counted by what
     * {@code by} reads of it, every value of {@code type} present. Caller holds the lock.
     */
    private <E extends Enum<E>> Map<E, Integer> countRanks(
            Class<E> type, boolean runningOnly, BiFunction<Rank, ListenerSnapshot, E> by) {
        Map<E, Integer> counts = new EnumMap<>(type);
        for (E e : type.getEnumConstants()) {
            counts.put(e, 0);
        }
        for (Instance inst : instances.values()) {
            for (Rank rank : inst.ranks.values()) {
                ListenerSnapshot l = rank.snapshot();
                if (!runningOnly || l.status().running()) {
                    counts.merge(by.apply(rank, l), 1, Integer::sum);
                }
            }
        }
        return counts;
    }

    /**
     * The watermark of one registration, if it was ever registered (kept across unregister, for the last {@code
     * --max-listeners} workers unregistered).
     */
    public SequenceWatermark watermark(long instanceId, int dpRank) {
        LearnedWatermark learned = watermarks.get(new WorkerKey(instanceId, dpRank));
        return learned == null ? null : learned.watermark();
    }

    /** Test control: pending/active → paused (the listener drops its sockets, the watermark is kept). */
    public synchronized void pause(long instanceId, int dpRank) throws RegistryException {
        control(instanceId, dpRank, "paused", RunningListener::pause);
    }

    /** Test control: paused/failed → a new listener attempt with the same watermark. */
    public synchronized void resume(long instanceId, int dpRank) throws RegistryException {
        control(instanceId, dpRank, "resumed", RunningListener::resume);
    }

    /** One test control on one listener; a conflict when its status does not allow it ({@code step} says false). */
    private void control(long instanceId, int dpRank, String done, Predicate<RunningListener> step)
            throws RegistryException {
        Rank rank = rank(instanceId, dpRank);
        if (!step.test(rank.listener)) {
            throw new RegistryException(
                    RegistryException.Kind.CONFLICT,
                    "instance " + Long.toUnsignedString(instanceId)
                            + " dp_rank " + Integer.toUnsignedString(dpRank) + " cannot be " + done + " from status "
                            + rank.snapshot().status().label());
        }
    }

    private Rank rank(long instanceId, int dpRank) throws RegistryException {
        Instance inst = instances.get(instanceId);
        if (inst == null) {
            throw new RegistryException(
                    RegistryException.Kind.NOT_FOUND, "instance " + Long.toUnsignedString(instanceId) + " not found");
        }
        Rank rank = inst.ranks.get(dpRank);
        if (rank == null) {
            throw new RegistryException(
                    RegistryException.Kind.NOT_FOUND,
                    "instance " + Long.toUnsignedString(instanceId) + " dp_rank " + Integer.toUnsignedString(dpRank)
                            + " not found");
        }
        return rank;
    }

    private void notifyObservers() {
        observers.forEach(Runnable::run);
    }

    /** Stops every listener, all at once ({@link #stopAll}). Registrations are not kept across restarts. */
    @Override
    public void close() {
        List<Rank> ranks;
        synchronized (this) {
            closed = true; // no registration from now on
            ranks = instances.values().stream()
                    .flatMap(i -> i.ranks.values().stream())
                    .toList();
        }
        long start = System.nanoTime();
        stopAll(ranks);
        if (!ranks.isEmpty()) {
            LOG.log(
                    System.Logger.Level.INFO,
                    "stopped {0} listeners in {1} ms",
                    ranks.size(),
                    (System.nanoTime() - start) / 1_000_000);
        }
    }
}

package io.kvindexer.operator.reconcile;

import io.fabric8.kubernetes.api.model.Pod;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.common.IndexerSecurity;
import io.kvindexer.operator.common.ServedAs;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * What the operator remembers per resource in memory (the last token a replica accepted, how a KvIndexer's replicas
 * were reached, former CAs, back-off counts, the Events written, what a replica holds) is forgotten once the
 * resource is gone: each such memory keeps only what {@link Live} still names, the KvIndexers, KvWorkers and replica
 * pods in the informers' caches. Swept on every delete event of a KvIndexer or a replica pod, and when a reconcile
 * ends on a resource deleted meanwhile; a KvWorker forgets its own at the end of its finalizer.
 *
 * <p>Pruning against the caches rather than a finalizer on KvIndexers: a finalizer would hold every KvIndexer's
 * deletion for as long as the operator is down or uninstalled, for state that is only a cache; and a sweep that
 * compares with what exists also removes what a missed event or a call still under way left behind.
 */
public final class Retention {

    /**
     * What exists, as the informers see it.
     *
     * @param indexers     {@code namespace/name} of every KvIndexer, and of every KvIndexer a replica pod still
     *                     runs for (deleted, its pods not collected yet: the KvWorkers still leave them)
     * @param workers      {@code namespace/name} of every KvWorker
     * @param uids         uids of every KvIndexer and KvWorker
     * @param pods         {@code namespace/name} of every replica pod
     * @param incarnations {@link IndexerReplica#incarnation} of every replica pod
     * @param certSecrets  {@code namespace/secret}: each KvIndexer's certificate Secret and those replica pods mount
     */
    public record Live(
            Set<String> indexers,
            Set<String> workers,
            Set<String> uids,
            Set<String> pods,
            Set<String> incarnations,
            Set<String> certSecrets) {

        public static Live of(Stream<KvIndexer> kvIndexers, Stream<KvWorker> kvWorkers, Stream<Pod> replicaPods) {
            Set<String> indexers = new HashSet<>();
            Set<String> workers = new HashSet<>();
            Set<String> uids = new HashSet<>();
            Set<String> pods = new HashSet<>();
            Set<String> incarnations = new HashSet<>();
            Set<String> certSecrets = new HashSet<>();
            kvIndexers.forEach(k -> {
                indexers.add(ControllerServices.key(k));
                uids.add(k.getMetadata().getUid());
                certSecrets.add(k.getMetadata().getNamespace() + "/" + IndexerSecurity.tlsSecret(k));
            });
            kvWorkers.forEach(w -> {
                workers.add(ControllerServices.key(w));
                uids.add(w.getMetadata().getUid());
            });
            replicaPods.forEach(p -> {
                String ns = p.getMetadata().getNamespace();
                pods.add(ControllerServices.key(p));
                incarnations.add(IndexerReplica.incarnation(p));
                Map<String, String> labels =
                        Objects.requireNonNullElse(p.getMetadata().getLabels(), Map.of());
                if (labels.get(IndexerNames.LABEL_INSTANCE) != null) {
                    indexers.add(ns + "/" + labels.get(IndexerNames.LABEL_INSTANCE));
                }
                ServedAs served = ServedAs.of(p);
                if (served != null && served.tlsSecret() != null) {
                    certSecrets.add(ns + "/" + served.tlsSecret());
                }
            });
            return new Live(indexers, workers, uids, pods, incarnations, certSecrets);
        }
    }

    /** One memory: how it keeps only what is live, and how many entries it holds (for tests). */
    public record Memory(Consumer<Live> retain, IntSupplier size) {}

    private final List<Memory> memories = new CopyOnWriteArrayList<>();
    private volatile Supplier<Live> live;

    public void add(Memory memory) {
        memories.add(memory);
    }

    /** Where {@link #sweep} reads what exists: the informers of the controller that watches all three kinds. */
    public void watch(Supplier<Live> live) {
        this.live = live;
    }

    /** Every memory keeps only what exists; nothing before the informers are there. */
    public void sweep() {
        Supplier<Live> source = live;
        if (source == null) {
            return;
        }
        Live now = source.get();
        memories.forEach(m -> m.retain().accept(now));
    }

    /** Entries held by every memory together: for tests. */
    public int size() {
        return memories.stream().mapToInt(m -> m.size().getAsInt()).sum();
    }
}

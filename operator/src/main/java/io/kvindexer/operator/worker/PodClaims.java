package io.kvindexer.operator.worker;

import io.fabric8.kubernetes.api.model.Pod;
import io.kvindexer.operator.common.CreationOrder;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.reconcile.LabelSelectors;
import io.kvindexer.operator.reconcile.PodConditions;
import java.util.List;
import java.util.Optional;

/**
 * Engine pods that other KvWorkers of the same KvIndexer also select. One instance can be registered only once per
 * replica, so two KvWorkers acting on the same pod would undo each other on every resync (another model, port or
 * rank count) and the one deleted first would take the pod's registration from the other. The KvWorker created
 * first (then by name) registers such a pod; a later one reports it and leaves it alone; a deleted one (or one
 * that no longer selects it, or names another KvIndexer) leaves a Ready pod that another still selects registered,
 * for that one to take over.
 *
 * @param self   the KvWorker being reconciled
 * @param others the other KvWorkers of its KvIndexer, not being deleted and with a usable spec
 */
record PodClaims(KvWorker self, List<KvWorker> others) {

    /** The KvWorker created before {@code self} that selects {@code pod}, the first such one. */
    Optional<KvWorker> earlier(Pod pod) {
        return others.stream()
                .filter(o -> CreationOrder.OLDEST_FIRST.compare(o, self) < 0 && selects(o, pod))
                .min(CreationOrder.OLDEST_FIRST);
    }

    /** Whether any other KvWorker selects {@code pod}. */
    boolean selectedByOther(Pod pod) {
        return others.stream().anyMatch(o -> selects(o, pod));
    }

    /**
     * Whether another KvWorker registers {@code pod} once {@code self} lets go of it (deleted, its selector or
     * indexerRef changed), so that its registration is to be left standing: a Ready pod another selects. A pod not
     * Ready is registered by none (a KvWorker holds only a pod it registered itself) and would stand for good.
     */
    boolean takenOverByOther(Pod pod) {
        return PodConditions.isReady(pod) && selectedByOther(pod);
    }

    boolean hasOthers() {
        return !others.isEmpty();
    }

    /** What a later KvWorker's status says of a pod an earlier one registers. */
    static String message(KvWorker earlier) {
        return "also selected by KvWorker " + earlier.getMetadata().getName()
                + ", created first, which registers it: narrow one of the selectors";
    }

    private static boolean selects(KvWorker w, Pod pod) {
        return LabelSelectors.matches(
                w.getSpec().getSelector(), pod.getMetadata().getLabels());
    }
}

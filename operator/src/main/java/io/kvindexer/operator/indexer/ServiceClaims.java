package io.kvindexer.operator.indexer;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Service;
import io.kvindexer.operator.common.CreationOrder;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * A KvIndexer's two Services are named after it ({@code <name>}, {@code <name>-peers}), so KvIndexers {@code x} and
 * {@code x-peers} both need a Service {@code x-peers}: the client Service of one, the headless Service of the other.
 * One Service cannot be both: the KvIndexer it already belongs to keeps it (with none, the one created first), and
 * the other is refused before it writes anything. Otherwise the other's StatefulSet would govern its pods by, and its
 * replicas recover from, a Service that selects the first one's pods. No other name of a KvIndexer's objects can be
 * another's: the StatefulSet, PDB, HPA, NetworkPolicy and ServiceMonitor are named as the KvIndexer (one of a kind
 * per name), and the Secrets end in {@code -auth} or {@code -tls} after the whole name.
 */
final class ServiceClaims {
    private ServiceClaims() {}

    /**
     * Why {@code kvi} may not have one of its Services, or null.
     *
     * @param existing  the Service of a name in {@code kvi}'s namespace, or null
     * @param indexers  the KvIndexers the operator knows ({@code kvi} among them)
     */
    static String problem(KvIndexer kvi, Function<String, Service> existing, Collection<KvIndexer> indexers) {
        for (String name : List.of(IndexerNames.clientService(kvi), IndexerNames.headlessService(kvi))) {
            Service service = existing.apply(name);
            String problem = service != null ? foreign(kvi, service) : claimedFirst(kvi, name, indexers);
            if (problem != null) {
                return problem + ": create this KvIndexer again under another name";
            }
        }
        return null;
    }

    /** What is wrong with Service {@code service} of one of {@code kvi}'s names, or null when it is kvi's. */
    private static String foreign(KvIndexer kvi, Service service) {
        String name = service.getMetadata().getName();
        Optional<OwnerReference> owner = service.getMetadata().getOwnerReferences().stream()
                .filter(o -> HasMetadata.getKind(KvIndexer.class).equals(o.getKind()))
                .findFirst();
        if (owner.isEmpty()) {
            return "Service " + name + ", which this KvIndexer's " + role(kvi, name)
                    + " Service would be, exists and belongs to no KvIndexer";
        }
        // the same name: kvi's own, or an earlier KvIndexer of the name's, which goes with it
        String other = owner.get().getName();
        return other.equals(kvi.getMetadata().getName())
                ? null
                : "Service " + name + " is the " + roleOf(other, name) + " Service of KvIndexer " + other
                        + ", and this KvIndexer's " + role(kvi, name) + " Service would have the same name";
    }

    /** Whether another KvIndexer created before {@code kvi} needs Service {@code name} too (none has it yet). */
    private static String claimedFirst(KvIndexer kvi, String name, Collection<KvIndexer> indexers) {
        return indexers.stream()
                .filter(o -> Objects.equals(
                                o.getMetadata().getNamespace(),
                                kvi.getMetadata().getNamespace())
                        && !o.getMetadata().getName().equals(kvi.getMetadata().getName())
                        && o.getMetadata().getDeletionTimestamp() == null
                        && CreationOrder.OLDEST_FIRST.compare(o, kvi) < 0
                        && (name.equals(IndexerNames.clientService(o)) || name.equals(IndexerNames.headlessService(o))))
                .findFirst()
                .map(o -> "KvIndexer " + o.getMetadata().getName() + ", created first, needs Service " + name
                        + " as its " + role(o, name) + " Service, and this KvIndexer's "
                        + role(kvi, name) + " Service would have the same name")
                .orElse(null);
    }

    private static String role(KvIndexer kvi, String service) {
        return roleOf(kvi.getMetadata().getName(), service);
    }

    private static String roleOf(String indexer, String service) {
        return service.equals(indexer) ? "client" : "headless (peer DNS)";
    }
}

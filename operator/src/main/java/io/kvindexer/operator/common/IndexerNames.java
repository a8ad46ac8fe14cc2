package io.kvindexer.operator.common;

import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

/** Names, labels and stable URLs of what a KvIndexer owns: one place, so nothing drifts apart. */
public final class IndexerNames {
    public static final String MANAGED_BY = "kv-indexer-operator";
    public static final String APP_NAME = "kv-indexer";
    public static final String LABEL_NAME = "app.kubernetes.io/name";
    public static final String LABEL_INSTANCE = "app.kubernetes.io/instance";
    public static final String LABEL_COMPONENT = "app.kubernetes.io/component";
    public static final String LABEL_PART_OF = "app.kubernetes.io/part-of";
    public static final String LABEL_MANAGED_BY = "app.kubernetes.io/managed-by";
    /** The indexer container of a replica pod. */
    public static final String CONTAINER = "indexer";
    /** Tells the two Services apart (they select the same pods). */
    public static final String LABEL_SERVICE_ROLE = "kvindexer.io/service";

    /**
     * The scheme a replica pod serves ({@code http} or {@code https}), set by the pod template beside the flags that
     * decide it: the ServiceMonitor picks each pod's scrape scheme by it, right from the pod's start, while a change
     * of TLS rolls the pods one at a time.
     */
    public static final String LABEL_SCHEME = "kvindexer.io/scheme";

    public static final String ROLE_CLIENT = "client";
    public static final String ROLE_PEERS = "peers";
    /** Informer scope of the operator's own objects and of the indexer pods. */
    public static final String MANAGED_SELECTOR =
            LABEL_MANAGED_BY + "=" + MANAGED_BY + "," + LABEL_NAME + "=" + APP_NAME;

    private IndexerNames() {}

    public static String statefulSet(KvIndexer kvi) {
        return kvi.getMetadata().getName();
    }

    public static String clientService(KvIndexer kvi) {
        return kvi.getMetadata().getName();
    }

    /** The headless Service that gives each replica a stable DNS name. */
    public static String headlessService(KvIndexer kvi) {
        return kvi.getMetadata().getName() + "-peers";
    }

    public static String hpa(KvIndexer kvi) {
        return kvi.getMetadata().getName();
    }

    public static String pdb(KvIndexer kvi) {
        return kvi.getMetadata().getName();
    }

    public static String pod(KvIndexer kvi, int ordinal) {
        return kvi.getMetadata().getName() + "-" + ordinal;
    }

    /**
     * Stable URL of replica {@code ordinal}: {@code https://<name>-<i>.<name>-peers.<ns>.svc:<port>} ({@code http}
     * with TLS off); the serving certificate covers the name.
     */
    public static String stableUrl(KvIndexer kvi, int ordinal) {
        return stableUrl(kvi, ordinal, IndexerSecurity.scheme(kvi));
    }

    /** The same in {@code scheme}: the one that replica's pod serves while a rollout changes it ({@link ServedAs}). */
    public static String stableUrl(KvIndexer kvi, int ordinal, String scheme) {
        return scheme + "://" + pod(kvi, ordinal) + "." + headlessService(kvi) + "."
                + kvi.getMetadata().getNamespace() + ".svc:" + kvi.getSpec().getPort();
    }

    /**
     * What every replica is given to find its peers at startup: the headless Service's name and port
     * ({@code --peers-dns <name>-peers.<ns>.svc:<port>}). The name resolves to the Ready replicas only, never to a
     * starting replica itself, and does not depend on the number of replicas.
     */
    public static String peersDns(KvIndexer kvi) {
        return headlessService(kvi) + "." + kvi.getMetadata().getNamespace() + ".svc:"
                + kvi.getSpec().getPort();
    }

    /** Stable URLs of every replica of the desired size, in ordinal order. */
    public static List<String> stableUrls(KvIndexer kvi) {
        return IntStream.range(0, kvi.getSpec().getReplicas())
                .mapToObj(i -> stableUrl(kvi, i))
                .toList();
    }

    /** Labels that select the pods of one KvIndexer (the StatefulSet selector; immutable). */
    public static Map<String, String> selectorLabels(KvIndexer kvi) {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(LABEL_NAME, APP_NAME);
        labels.put(LABEL_INSTANCE, kvi.getMetadata().getName());
        return labels;
    }

    /** {@link #selectorLabels} as a label-selector string (the scale subresource's selector). */
    public static String selector(KvIndexer kvi) {
        StringBuilder sb = new StringBuilder();
        selectorLabels(kvi)
                .forEach((k, v) ->
                        sb.append(sb.isEmpty() ? "" : ",").append(k).append('=').append(v));
        return sb.toString();
    }

    /** The Kubernetes recommended labels, on everything the operator creates. */
    public static Map<String, String> labels(KvIndexer kvi) {
        Map<String, String> labels = selectorLabels(kvi);
        labels.put(LABEL_COMPONENT, "indexer");
        labels.put(LABEL_PART_OF, APP_NAME);
        labels.put(LABEL_MANAGED_BY, MANAGED_BY);
        return labels;
    }

    /** The ordinal of a StatefulSet pod name ({@code <name>-<i>}), or -1 when the name is not one of ours. */
    public static int ordinalOf(KvIndexer kvi, String podName) {
        String prefix = kvi.getMetadata().getName() + "-";
        if (podName == null || !podName.startsWith(prefix)) {
            return -1;
        }
        try {
            return Integer.parseInt(podName.substring(prefix.length()));
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}

package io.kvindexer.operator.indexer;

import static io.kvindexer.operator.reconcile.SpecChecks.atLeastOne;
import static io.kvindexer.operator.reconcile.SpecChecks.between;
import static io.kvindexer.operator.reconcile.SpecChecks.first;
import static io.kvindexer.operator.reconcile.SpecChecks.required;
import static io.kvindexer.operator.reconcile.SpecChecks.zeroOrMore;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.KvIndexerSpec;
import io.kvindexer.operator.crd.v1alpha1.Persistence;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The reconciler's own guard for what the CRD schema also rejects (objects may reach the operator without the
 * schema: older CRDs, tests, a server that does not validate). Returns a message naming the field, or null.
 */
public final class KvIndexerValidation {
    private KvIndexerValidation() {}

    /**
     * Present, without whitespace: the schema's pattern (as for imagePullPolicy's): the API server refuses a pod
     * template whose image has leading or trailing whitespace, and so the StatefulSet, and no image has any inside.
     */
    private static String image(String image) {
        String required = required("spec.image", image);
        if (required != null) {
            return required;
        }
        return image.chars().anyMatch(Character::isWhitespace)
                ? "spec.image must not contain whitespace, got \"" + image + "\""
                : null;
    }

    /** At least one shard and at most the writer threads (0 or 1 threads: one), as the indexer requires. */
    private static String indexShards(KvIndexerSpec spec) {
        Integer threads = spec.getThreads() == null ? 1 : Math.max(1, spec.getThreads());
        return between("spec.indexShards", spec.getIndexShards(), 1, threads);
    }

    /**
     * Every quantity of {@code spec.resources} parses: one that does not ("lots") reads fine but fails wherever it is
     * compared, and the API server's schema for a quantity (int or string) lets it through.
     */
    private static String quantities(ResourceRequirements resources) {
        if (resources == null) {
            return null;
        }
        return first(
                quantities("spec.resources.limits", resources.getLimits()),
                quantities("spec.resources.requests", resources.getRequests()));
    }

    static String quantities(String field, Map<String, Quantity> values) {
        if (values == null) {
            return null;
        }
        for (Map.Entry<String, Quantity> e : new TreeMap<>(values).entrySet()) {
            Quantity q = e.getValue();
            try {
                Quantity.getAmountInBytes(q);
            } catch (RuntimeException bad) {
                return field + "." + e.getKey() + ": \"" + (q == null ? null : q.toString()) + "\" is not a quantity";
            }
        }
        return null;
    }

    /** A size that parses and is above zero; an interval of at least a second. */
    private static String persistence(Persistence p) {
        if (p == null) {
            return null;
        }
        if (p.size() == null) {
            return "spec.persistence.size is required";
        }
        String parse = quantities("spec.persistence", Map.of("size", p.size()));
        if (parse != null) {
            return parse;
        }
        if (Quantity.getAmountInBytes(p.size()).signum() <= 0) {
            return "spec.persistence.size must be above 0, got " + p.size();
        }
        return p.snapshotIntervalSeconds() == null
                ? null
                : atLeastOne("spec.persistence.snapshotIntervalSeconds", p.snapshotIntervalSeconds());
    }

    /**
     * The longest KvIndexer name: its StatefulSet's pods carry the label {@code controller-revision-hash:
     * <name>-<hash>}, at most 63 characters with a hash of up to 10, so a longer name gets no pod at all.
     */
    static final int NAME_MAX = 52;

    /** A DNS-1035 label, as a Service name must be: the client Service is named as the KvIndexer, the other adds -peers. */
    private static final Pattern DNS_LABEL = Pattern.compile("[a-z]([-a-z0-9]*[a-z0-9])?");

    /**
     * What is wrong with {@code kvi}, or null: its name, which the API server accepts for a KvIndexer (a DNS subdomain)
     * but not always for the StatefulSet's pods and the Services named after it, then its spec.
     */
    public static String validate(KvIndexer kvi) {
        String name = kvi.getMetadata().getName();
        if (kvi.getSpec() != null
                && kvi.getSpec().unreadable() == null
                && (name.length() > NAME_MAX || !DNS_LABEL.matcher(name).matches())) {
            return "metadata.name must be at most " + NAME_MAX + " lower-case letters, digits and '-', beginning with a"
                    + " letter and ending with a letter or digit (the replica pods and the Services are named after it),"
                    + " got \"" + name + "\" (" + name.length()
                    + " characters): create the KvIndexer again under such a"
                    + " name";
        }
        return validate(kvi.getSpec());
    }

    public static String validate(KvIndexerSpec spec) {
        if (spec == null) {
            return "spec is required";
        }
        if (spec.unreadable() != null) {
            return spec.unreadable();
        }
        String problem = first(
                image(spec.getImage()),
                spec.getImagePullPolicy() != null
                                && !List.of("Always", "IfNotPresent", "Never").contains(spec.getImagePullPolicy())
                        ? "spec.imagePullPolicy must be Always, IfNotPresent or Never, got " + spec.getImagePullPolicy()
                        : null,
                between("spec.replicas", spec.getReplicas(), 1, 64),
                between("spec.port", spec.getPort(), 1, 65535),
                zeroOrMore("spec.threads", spec.getThreads()),
                indexShards(spec),
                zeroOrMore("spec.minInitialWorkers", spec.getMinInitialWorkers()),
                spec.getUnregisterGraceSeconds() == null
                        ? null
                        : zeroOrMore("spec.unregisterGraceSeconds", spec.getUnregisterGraceSeconds()),
                spec.getShutdownDelaySeconds() == null
                        ? null
                        : between("spec.shutdownDelaySeconds", spec.getShutdownDelaySeconds(), 0, 300),
                quantities(spec.getResources()),
                persistence(spec.getPersistence()),
                spec.getBlockTtl() == null ? null : spec.getBlockTtl().problem(),
                spec.getMaxBlocksPerWorker() != null && spec.getMaxBlocksPerWorker() < 0
                        ? "spec.maxBlocksPerWorker must be 0 or more, got " + spec.getMaxBlocksPerWorker()
                        : null);
        if (problem != null) {
            return problem;
        }
        if (spec.getAutoscaling() != null) {
            var a = spec.getAutoscaling();
            if (a.minReplicas() == null || a.maxReplicas() == null || a.targetCPUUtilizationPercentage() == null) {
                return "spec.autoscaling needs minReplicas, maxReplicas and targetCPUUtilizationPercentage";
            }
            if (a.minReplicas() < 1 || a.maxReplicas() > 64 || a.minReplicas() > a.maxReplicas()) {
                return "spec.autoscaling: 1 <= minReplicas <= maxReplicas <= 64, got " + a.minReplicas() + ".."
                        + a.maxReplicas();
            }
            if (a.targetCPUUtilizationPercentage() < 1 || a.targetCPUUtilizationPercentage() > 100) {
                return "spec.autoscaling.targetCPUUtilizationPercentage must be between 1 and 100, got "
                        + a.targetCPUUtilizationPercentage();
            }
        }
        return null;
    }
}

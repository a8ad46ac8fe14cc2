package io.kvindexer.operator.reconcile;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Kubernetes label-selector semantics (matchLabels AND matchExpressions); an empty selector matches everything. A
 * KvWorker's selector is also the engines' peer in its KvIndexer's NetworkPolicy, which the API server validates
 * ({@link #validate}).
 */
public final class LabelSelectors {
    /** A label value, and the name part of a key: at most 63 characters. */
    private static final Pattern NAME = Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
    /** A key's prefix: a DNS subdomain, at most 253 characters. */
    private static final Pattern PREFIX =
            Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

    private LabelSelectors() {}

    public static boolean matches(LabelSelector selector, Map<String, String> labels) {
        if (selector == null) {
            return false;
        }
        Map<String, String> l = labels == null ? Map.of() : labels;
        if (selector.getMatchLabels() != null) {
            for (Map.Entry<String, String> e : selector.getMatchLabels().entrySet()) {
                if (!e.getValue().equals(l.get(e.getKey()))) {
                    return false;
                }
            }
        }
        if (selector.getMatchExpressions() != null) {
            for (LabelSelectorRequirement r : selector.getMatchExpressions()) {
                if (!matches(r, l)) {
                    return false;
                }
            }
        }
        return true;
    }

    private static boolean matches(LabelSelectorRequirement r, Map<String, String> labels) {
        String value = labels.get(r.getKey());
        List<String> values = r.getValues() == null ? List.of() : r.getValues();
        return switch (r.getOperator()) {
            case "In" -> value != null && values.contains(value);
            case "NotIn" -> value == null || !values.contains(value);
            case "Exists" -> labels.containsKey(r.getKey());
            case "DoesNotExist" -> !labels.containsKey(r.getKey());
            default -> throw new IllegalArgumentException("unknown selector operator " + r.getOperator());
        };
    }

    /**
     * Null when the selector is usable, else a message naming the problem: what the API server refuses in a label
     * selector (a key or value that no label can have, values for Exists / DoesNotExist), which the CRD's schema of
     * a KvWorker's selector does not check; in the KvIndexer's NetworkPolicy it would fail every write of the policy.
     * And an empty one, which the API server takes but which selects every pod.
     */
    public static String validate(LabelSelector selector) {
        if (selector == null) {
            return "spec.selector is required";
        }
        if ((selector.getMatchLabels() == null || selector.getMatchLabels().isEmpty())
                && (selector.getMatchExpressions() == null
                        || selector.getMatchExpressions().isEmpty())) {
            // the engines share the namespace with the KvIndexer's replicas, which it would register as engines
            return "spec.selector must have a matchLabels entry or a matchExpression: an empty one selects every pod"
                    + " of the namespace, the indexer replicas among them";
        }
        if (selector.getMatchLabels() != null) {
            for (Map.Entry<String, String> e : new TreeMap<>(selector.getMatchLabels()).entrySet()) {
                String problem = SpecChecks.first(
                        keyProblem("spec.selector.matchLabels", e.getKey()),
                        valueProblem("spec.selector.matchLabels." + e.getKey(), e.getValue()));
                if (problem != null) {
                    return problem;
                }
            }
        }
        if (selector.getMatchExpressions() != null) {
            for (LabelSelectorRequirement r : selector.getMatchExpressions()) {
                String op = r.getOperator();
                if (!List.of("In", "NotIn", "Exists", "DoesNotExist").contains(op)) {
                    return "spec.selector.matchExpressions: unknown operator " + op;
                }
                String problem = keyProblem("spec.selector.matchExpressions", r.getKey());
                if (problem != null) {
                    return problem;
                }
                boolean needsValues = op.equals("In") || op.equals("NotIn");
                boolean hasValues = r.getValues() != null && !r.getValues().isEmpty();
                if (needsValues && !hasValues) {
                    return "spec.selector.matchExpressions: " + op + " on " + r.getKey() + " needs values";
                }
                if (!needsValues && hasValues) {
                    return "spec.selector.matchExpressions: " + op + " on " + r.getKey() + " takes no values, got "
                            + r.getValues();
                }
                for (String v : hasValues ? r.getValues() : List.<String>of()) {
                    problem = valueProblem("spec.selector.matchExpressions." + r.getKey(), v);
                    if (problem != null) {
                        return problem;
                    }
                }
            }
        }
        return null;
    }

    /** A label key: an optional DNS-subdomain prefix and '/', then a name of at most 63 characters. */
    private static String keyProblem(String field, String key) {
        String k = key == null ? "" : key;
        int slash = k.lastIndexOf('/');
        String prefix = slash < 0 ? null : k.substring(0, slash);
        String name = k.substring(slash + 1);
        boolean ok = name.length() <= 63
                && NAME.matcher(name).matches()
                && (prefix == null
                        || (prefix.length() <= 253 && PREFIX.matcher(prefix).matches()));
        return ok
                ? null
                : field + ": \"" + k + "\" is not a label key (an optional DNS subdomain and '/', then at most 63"
                        + " letters, digits, '-', '_' or '.', beginning and ending with a letter or digit)";
    }

    /** A label value: empty, or at most 63 characters as a key's name. */
    private static String valueProblem(String field, String value) {
        String v = value == null ? "" : value;
        return v.isEmpty() || (v.length() <= 63 && NAME.matcher(v).matches())
                ? null
                : field + ": \"" + v + "\" is not a label value (at most 63 letters, digits, '-', '_' or '.',"
                        + " beginning and ending with a letter or digit)";
    }
}

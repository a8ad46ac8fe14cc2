package io.kvindexer.operator.worker;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import java.util.List;
import java.util.Map;

/** Kubernetes label-selector semantics (matchLabels AND matchExpressions); an empty selector matches everything. */
public final class LabelSelectors {
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

    /** Null when the selector is usable, else a message naming the problem. */
    public static String validate(LabelSelector selector) {
        if (selector == null) {
            return "spec.selector is required";
        }
        if (selector.getMatchExpressions() != null) {
            for (LabelSelectorRequirement r : selector.getMatchExpressions()) {
                String op = r.getOperator();
                if (!List.of("In", "NotIn", "Exists", "DoesNotExist").contains(op)) {
                    return "spec.selector.matchExpressions: unknown operator " + op;
                }
                boolean needsValues = op.equals("In") || op.equals("NotIn");
                if (needsValues && (r.getValues() == null || r.getValues().isEmpty())) {
                    return "spec.selector.matchExpressions: " + op + " on " + r.getKey() + " needs values";
                }
            }
        }
        return null;
    }
}

package io.kvindexer.operator.crd.v1alpha1;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;

/** Kubernetes-style conditions: lastTransitionTime only moves when the status value changes. */
public final class Conditions {
    public static final String READY = "Ready";
    public static final String PROGRESSING = "Progressing";
    public static final String DEGRADED = "Degraded";
    /** Reason of all three conditions when a reconcile threw. */
    public static final String REASON_RECONCILE_FAILED = "ReconcileFailed";

    private static final int MAX_MESSAGE = 1000;

    private Conditions() {}

    /**
     * A condition stamped with {@code observedGeneration}; keeps the previous transition time when {@code previous}
     * holds the same type with the same status.
     */
    public static Condition of(
            String type,
            boolean status,
            String reason,
            String message,
            long observedGeneration,
            List<Condition> previous,
            Clock clock) {
        String value = status ? "True" : "False";
        String since = previous == null
                ? null
                : previous.stream()
                        .filter(c -> type.equals(c.getType()) && value.equals(c.getStatus()))
                        .map(Condition::getLastTransitionTime)
                        .findFirst()
                        .orElse(null);
        if (since == null) {
            since = Instant.now(clock).truncatedTo(ChronoUnit.SECONDS).toString();
        }
        return new ConditionBuilder()
                .withType(type)
                .withStatus(value)
                .withReason(reason)
                .withMessage(message)
                .withObservedGeneration(observedGeneration)
                .withLastTransitionTime(since)
                .build();
    }

    /** The three conditions of a reconcile that threw: not Ready, not Progressing, Degraded, all saying why. */
    public static List<Condition> reconcileFailed(
            Throwable error, long observedGeneration, List<Condition> previous, Clock clock) {
        String message = describe(error);
        return List.of(
                of(READY, false, REASON_RECONCILE_FAILED, message, observedGeneration, previous, clock),
                of(PROGRESSING, false, REASON_RECONCILE_FAILED, message, observedGeneration, previous, clock),
                of(DEGRADED, true, REASON_RECONCILE_FAILED, message, observedGeneration, previous, clock));
    }

    /** A condition message for an exception: its type and message, shortened to what a condition holds well. */
    public static String describe(Throwable error) {
        String text = error.getClass().getSimpleName() + (error.getMessage() == null ? "" : ": " + error.getMessage());
        return text.length() > MAX_MESSAGE ? text.substring(0, MAX_MESSAGE) + "..." : text;
    }

    public static boolean isTrue(List<Condition> conditions, String type) {
        return conditions != null
                && conditions.stream().anyMatch(c -> type.equals(c.getType()) && "True".equals(c.getStatus()));
    }
}

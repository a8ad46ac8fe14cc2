package io.kvindexer.operator.common;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Comparator;

/** Who came first when two resources want the same thing: the older, by name within a second. */
public final class CreationOrder {
    private CreationOrder() {}

    /** Oldest first, by name within a second (creationTimestamp has seconds only). */
    public static final Comparator<HasMetadata> OLDEST_FIRST = Comparator.comparing(CreationOrder::created)
            .thenComparing(r -> r.getMetadata().getName());

    private static Instant created(HasMetadata r) {
        String at = r.getMetadata().getCreationTimestamp();
        if (at == null) {
            return Instant.MAX; // not stored yet: the newest
        }
        try {
            return Instant.parse(at);
        } catch (DateTimeParseException e) {
            return Instant.MAX;
        }
    }
}

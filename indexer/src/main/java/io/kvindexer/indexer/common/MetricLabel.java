package io.kvindexer.indexer.common;

import java.util.Locale;

/**
 * An enum whose constants are metric label values (and API strings): the value is the constant's name in lower
 * case, so the two can never drift apart. Dashboards and alerts match on these values: renaming a constant renames
 * its label.
 */
public interface MetricLabel {

    String name();

    default String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}

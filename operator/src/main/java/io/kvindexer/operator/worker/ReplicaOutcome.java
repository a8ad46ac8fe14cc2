package io.kvindexer.operator.worker;

import java.util.Set;

/**
 * The result of syncing one replica: the instances holding all their desired ranks there after the sync, the
 * owned instances still registered there although no longer desired, and the error if the sync failed (then the
 * sets hold what is known, possibly nothing).
 */
public record ReplicaOutcome(String replica, Set<Long> registered, Set<Long> leftovers, int made, int removed,
        String error) {

    public boolean failed() {
        return error != null;
    }
}

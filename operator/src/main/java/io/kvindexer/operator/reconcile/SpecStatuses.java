package io.kvindexer.operator.reconcile;

/**
 * The statuses a controller writes when it does not get to its own work: each returns a fresh object that holds only
 * name, namespace and the status ({@link StatusUpdates#statusOnly}).
 *
 * @param <P> the primary resource
 */
public interface SpecStatuses<P> {

    /** A spec that cannot be read, or one that is refused: the condition's reason and message. */
    P refused(P primary, String reason, String message);

    /** A reconcile that threw: the conditions say so, everything else in the status stays. */
    P failed(P primary, Exception error);
}

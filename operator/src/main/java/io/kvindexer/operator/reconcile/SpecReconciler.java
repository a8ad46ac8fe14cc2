package io.kvindexer.operator.reconcile;

import io.fabric8.kubernetes.client.CustomResource;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.kvindexer.operator.crd.v1alpha1.UnknownFields;
import java.time.Duration;
import java.util.Set;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.event.Level;
import org.slf4j.spi.LoggingEventBuilder;

/**
 * The frame both controllers reconcile in: a spec this operator cannot read, or one it refuses, stops the reconcile
 * with a status that says so ({@link ControllerServices#refuses}); an accepted spec gets the controller's own work,
 * which writes its status and says when to look again ({@link #writeStatus}); a reconcile that threw is reported in
 * the status ({@link ControllerServices#failed}) and JOSDK retries it with its own back-off. Each controller passes
 * its own logger, so log lines still name the controller.
 *
 * @param <P> the primary resource (first: JOSDK takes a reconciler's primary type from its first type argument)
 * @param <T> the primary's spec
 * @param <S> the primary's status
 * @param <F> the controller's status factory
 */
public abstract class SpecReconciler<
        P extends CustomResource<T, S>, T extends UnknownFields, S, F extends SpecStatuses<P>> {
    protected final ControllerServices services;
    protected final Backoff backoff;
    protected final F statusFactory;
    private final Logger log;
    private final Function<P, String> validation;

    /**
     * @param validation what is wrong with a primary whose spec was read (its spec, its name), or null when it is
     *     acceptable
     * @param live       the primaries that exist: the back-off counts of others are forgotten ({@link Retention})
     */
    protected SpecReconciler(
            ControllerServices services,
            Logger log,
            Function<P, String> validation,
            F statusFactory,
            Function<Retention.Live, Set<String>> live) {
        Backoff counts = services.backoff();
        services.retention().add(new Retention.Memory(l -> counts.retain(live.apply(l)), counts::size));
        this.services = services;
        this.backoff = counts;
        this.statusFactory = statusFactory;
        this.log = log;
        this.validation = validation;
    }

    /** The controller's own work, on a spec that was read and accepted. */
    protected abstract UpdateControl<P> reconcileAccepted(P primary, Context<P> context);

    public UpdateControl<P> reconcile(P primary, Context<P> context) {
        String invalid = validation.apply(primary);
        if (services.refuses(
                log,
                context,
                primary,
                invalid,
                (reason, m) -> statusFactory.refused(primary, reason, m).getStatus())) {
            return UpdateControl.noUpdate();
        }
        return reconcileAccepted(primary, context);
    }

    /** Counted by JOSDK's Metrics#failedReconciliation (OperatorMetrics). */
    public ErrorStatusUpdateControl<P> updateErrorStatus(P primary, Context<P> context, Exception e) {
        try {
            return ControllerServices.failed(
                    log, context, primary, e, statusFactory.failed(primary, e).getStatus());
        } finally {
            forgetIfDeleted(primary, context);
        }
    }

    /** Writes {@code status} (through the controller's cache) and asks to reconcile again after {@code next}. */
    protected UpdateControl<P> writeStatus(Context<P> context, P primary, S status, Duration next) {
        try {
            StatusUpdates.write(context, primary, status); // refused once the primary is gone
        } finally {
            forgetIfDeleted(primary, context);
        }
        return UpdateControl.<P>noUpdate().rescheduleAfter(next);
    }

    /**
     * Sweeps what is remembered ({@link Retention}) if {@code primary} was deleted while its reconcile ran: the
     * reconcile may have remembered it again after its delete was swept. The last step of every reconcile.
     */
    protected void forgetIfDeleted(P primary, Context<P> context) {
        if (context.getPrimaryCache().get(ResourceID.fromResource(primary)).isEmpty()) {
            services.retention().sweep();
        }
    }

    /** A log line about one replica of {@code primary}: the primary's key and the replica's pod come first. */
    protected LoggingEventBuilder atReplica(Level level, P primary, String replica) {
        return log.atLevel(level)
                .addKeyValue(ControllerServices.logKey(primary), ControllerServices.key(primary))
                .addKeyValue("replica", replica);
    }

    /** A call to one replica failed: counted as a reconcile error of {@code controller} and logged; it is retried. */
    protected void replicaFailed(String controller, P primary, String replica, String error, String what) {
        services.metrics().reconcileError(controller);
        atReplica(Level.WARN, primary, replica).addKeyValue("error", error).log(what);
    }
}

package io.kvindexer.operator.reconcile;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.CustomResource;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.kvindexer.operator.client.IndexerClient;
import io.kvindexer.operator.crd.v1alpha1.UnknownFields;
import io.kvindexer.operator.observability.EventRecorder;
import io.kvindexer.operator.observability.OperatorMetrics;
import java.time.Clock;
import java.time.Duration;
import java.util.Locale;
import java.util.function.BiFunction;
import org.slf4j.Logger;

/**
 * What both controllers are built from, and the two steps they take the same way: refusing a spec, and reporting
 * a reconcile that threw. Each controller passes its own logger, so log lines still name the controller.
 */
public record ControllerServices(
        IndexerClient client,
        Clock clock,
        EventRecorder events,
        OperatorMetrics metrics,
        Duration resync,
        TrustedCas cas,
        Retention retention) {

    /**
     * The shared memories that are about resources are kept to the resources that exist ({@link Retention}): the
     * last token accepted per KvIndexer, the Events written per object, the former CAs per certificate Secret.
     */
    public ControllerServices {
        retention.add(new Retention.Memory(live -> client.retainTokens(live.indexers()), client::rememberedTokens));
        retention.add(new Retention.Memory(live -> events.retain(live.uids()), events::remembered));
        retention.add(
                new Retention.Memory(live -> cas.retain(live.certSecrets()::contains, live.incarnations()), cas::size));
    }

    /** With memories of their own: a fresh {@link TrustedCas} and {@link Retention}. */
    public ControllerServices(
            IndexerClient client, Clock clock, EventRecorder events, OperatorMetrics metrics, Duration resync) {
        this(client, clock, events, metrics, resync, new TrustedCas(), new Retention());
    }

    /** A fresh per-resource back-off for retries: from half a second, doubling, up to the resync period. */
    public Backoff backoff() {
        return new Backoff(Duration.ofMillis(500), resync);
    }

    /** Reason of the condition and Event of a spec this operator cannot read at all. */
    public static final String UNREADABLE = "Unreadable";
    /** Reason of the condition and Event of a spec that was read but is refused. */
    public static final String INVALID_SPEC = "InvalidSpec";

    /**
     * Reports the spec fields this operator ignores; a spec it cannot read, or one that {@code invalid} names a problem
     * in, is logged, gets a Warning Event and the status {@code refusedStatus} makes of (reason, message).
     *
     * @param invalid what is wrong with the spec, or null when it is acceptable
     * @return true when the spec is refused (the reconcile stops there)
     */
    public <S, P extends CustomResource<? extends UnknownFields, S>> boolean refuses(
            Logger log, Context<P> context, P primary, String invalid, BiFunction<String, String, S> refusedStatus) {
        UnknownFields spec = primary.getSpec();
        String unreadable = spec == null ? null : spec.unreadable();
        if (spec != null && unreadable == null) {
            events.unknownFields(primary, spec.unknownFieldNames());
        }
        String reason = unreadable != null ? UNREADABLE : INVALID_SPEC;
        String message = unreadable != null ? unreadable : invalid;
        if (message == null) {
            return false;
        }
        log.atWarn()
                .addKeyValue(logKey(primary), key(primary))
                .addKeyValue("reason", message)
                .log(unreadable != null ? "spec cannot be read" : "invalid spec");
        events.warning(primary, reason, message);
        StatusUpdates.write(context, primary, refusedStatus.apply(reason, message));
        return true;
    }

    /**
     * A reconcile threw: logged, and the status JOSDK patches in (the exception is counted by JOSDK's
     * Metrics#failedReconciliation, see OperatorMetrics).
     */
    public static <S, P extends CustomResource<?, S>> ErrorStatusUpdateControl<P> failed(
            Logger log, Context<P> context, P primary, Exception e, S failedStatus) {
        log.atWarn()
                .addKeyValue(logKey(primary), key(primary))
                .addKeyValue("error", String.valueOf(e))
                .log("reconcile failed; retrying");
        P copy = context.getClient().getKubernetesSerialization().clone(primary);
        copy.setStatus(failedStatus);
        return ErrorStatusUpdateControl.patchStatus(copy);
    }

    /** {@code namespace/name}: the key of back-off and of log lines. */
    public static String key(HasMetadata resource) {
        return resource.getMetadata().getNamespace() + "/"
                + resource.getMetadata().getName();
    }

    /** The log field naming the resource: its kind in lower case ({@code kvindexer}, {@code kvworker}). */
    static String logKey(HasMetadata resource) {
        return HasMetadata.getKind(resource.getClass()).toLowerCase(Locale.ROOT);
    }
}

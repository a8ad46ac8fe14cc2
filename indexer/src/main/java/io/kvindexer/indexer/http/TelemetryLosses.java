package io.kvindexer.indexer.http;

import io.kvindexer.indexer.metrics.IndexerMetrics;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.metrics.InstrumentType;
import io.opentelemetry.sdk.metrics.data.AggregationTemporality;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.data.MetricDataType;
import io.opentelemetry.sdk.metrics.export.CollectionRegistration;
import io.opentelemetry.sdk.metrics.export.MetricReader;

/**
 * What the OpenTelemetry SDK's batch processors dropped (a full queue) and its exporters could not send, read from
 * the SDK's own self-observability counters at scrape time: the SDK drops silently, so without this a collector's
 * gaps have no cause on our side. The SDK records them on the meter provider this reader is registered with; no
 * metric is exported anywhere else ({@code otel.metrics.exporter} stays {@code none}).
 *
 * <p>Both of the SDK's namings are read: its default ("legacy": {@code processedSpans} / {@code processedLogs} with
 * {@code dropped=true}, {@code otlp.exporter.exported} with {@code success=false}) and the semantic-convention one
 * ({@code otel.sdk.processor.*.processed} with an {@code error.type}, {@code otel.sdk.exporter.*.exported} likewise).
 */
final class TelemetryLosses implements MetricReader {

    /** How an item of a signal was lost, and its {@code reason} label. */
    enum Loss {
        /** the batch processor's queue was full */
        DROPPED("dropped"),
        /** the exporter could not send it (the collector refused or was unreachable) */
        FAILED("failed");

        final String label;

        Loss(String label) {
            this.label = label;
        }
    }

    /** the {@code signal} labels */
    private static final String[] SIGNALS = {"spans", "logs"};

    private static final AttributeKey<Boolean> LEGACY_DROPPED = AttributeKey.booleanKey("dropped");
    private static final AttributeKey<Boolean> LEGACY_SUCCESS = AttributeKey.booleanKey("success");
    private static final AttributeKey<String> LEGACY_TYPE = AttributeKey.stringKey("type");
    private static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");

    private volatile CollectionRegistration registration = CollectionRegistration.noop();

    /**
     * Hands {@code to} the items of each signal lost by each reason since the start, from one collection of the SDK's
     * counters.
     */
    void report(IndexerMetrics.LossCount to) {
        Loss[] losses = Loss.values();
        long[] totals = new long[SIGNALS.length * losses.length];
        for (MetricData m : registration.collectAllMetrics()) {
            if (m.getType() != MetricDataType.LONG_SUM) {
                continue;
            }
            for (LongPointData p : m.getLongSumData().getPoints()) {
                for (int s = 0; s < SIGNALS.length; s++) {
                    for (Loss loss : losses) {
                        if (counts(m.getName(), p.getAttributes(), SIGNALS[s], loss)) {
                            totals[s * losses.length + loss.ordinal()] += p.getValue();
                        }
                    }
                }
            }
        }
        for (int s = 0; s < SIGNALS.length; s++) {
            for (Loss loss : losses) {
                to.count(SIGNALS[s], loss.label, totals[s * losses.length + loss.ordinal()]);
            }
        }
    }

    /** Whether a point of the SDK's metric {@code name} counts items of {@code signal} lost as {@code loss}. */
    static boolean counts(String name, Attributes a, String signal, Loss loss) {
        String legacyProcessor = signal.equals("spans") ? "processedSpans" : "processedLogs";
        String item = signal.equals("spans") ? "span" : "log"; // the legacy type attribute and the semconv names'
        return switch (loss) {
            case DROPPED ->
                (name.equals(legacyProcessor) && Boolean.TRUE.equals(a.get(LEGACY_DROPPED)))
                        || (name.equals("otel.sdk.processor." + item + ".processed") && a.get(ERROR_TYPE) != null);
            case FAILED ->
                (name.equals("otlp.exporter.exported")
                                && item.equals(a.get(LEGACY_TYPE))
                                && Boolean.FALSE.equals(a.get(LEGACY_SUCCESS)))
                        || (name.equals("otel.sdk.exporter." + item + ".exported") && a.get(ERROR_TYPE) != null);
        };
    }

    @Override
    public void register(CollectionRegistration registration) {
        this.registration = registration;
    }

    @Override
    public AggregationTemporality getAggregationTemporality(InstrumentType instrumentType) {
        return AggregationTemporality.CUMULATIVE; // totals since the start, as a Prometheus counter is
    }

    @Override
    public CompletableResultCode forceFlush() {
        return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode shutdown() {
        registration = CollectionRegistration.noop();
        return CompletableResultCode.ofSuccess();
    }
}

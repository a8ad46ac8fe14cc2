package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.http.TelemetryLosses.Loss;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import org.junit.jupiter.api.Test;

/** Both of the SDK's namings of its self-observability counters are read (RequestTracingTest sees them live). */
class TelemetryLossesTest {

    @Test
    void theLegacyNamesCountDroppedAndFailedItemsOfTheirSignal() {
        Attributes dropped = Attributes.of(AttributeKey.booleanKey("dropped"), true);
        assertThat(TelemetryLosses.counts("processedSpans", dropped, "spans", Loss.DROPPED))
                .isTrue();
        assertThat(TelemetryLosses.counts("processedLogs", dropped, "logs", Loss.DROPPED))
                .isTrue();
        assertThat(TelemetryLosses.counts("processedSpans", dropped, "logs", Loss.DROPPED))
                .isFalse();
        assertThat(TelemetryLosses.counts(
                        "processedSpans",
                        Attributes.of(AttributeKey.booleanKey("dropped"), false),
                        "spans",
                        Loss.DROPPED))
                .isFalse();

        Attributes failedSpans =
                Attributes.of(AttributeKey.stringKey("type"), "span", AttributeKey.booleanKey("success"), false);
        assertThat(TelemetryLosses.counts("otlp.exporter.exported", failedSpans, "spans", Loss.FAILED))
                .isTrue();
        assertThat(TelemetryLosses.counts("otlp.exporter.exported", failedSpans, "logs", Loss.FAILED))
                .isFalse();
        assertThat(TelemetryLosses.counts(
                        "otlp.exporter.exported",
                        Attributes.of(AttributeKey.stringKey("type"), "span", AttributeKey.booleanKey("success"), true),
                        "spans",
                        Loss.FAILED))
                .isFalse();
    }

    @Test
    void theSemanticConventionNamesCountItemsWithAnErrorType() {
        Attributes queueFull = Attributes.of(AttributeKey.stringKey("error.type"), "queue_full");
        assertThat(TelemetryLosses.counts("otel.sdk.processor.span.processed", queueFull, "spans", Loss.DROPPED))
                .isTrue();
        assertThat(TelemetryLosses.counts("otel.sdk.processor.log.processed", queueFull, "logs", Loss.DROPPED))
                .isTrue();
        assertThat(TelemetryLosses.counts(
                        "otel.sdk.processor.span.processed", Attributes.empty(), "spans", Loss.DROPPED))
                .isFalse();
        Attributes refused = Attributes.of(AttributeKey.stringKey("error.type"), "UNAVAILABLE");
        assertThat(TelemetryLosses.counts("otel.sdk.exporter.span.exported", refused, "spans", Loss.FAILED))
                .isTrue();
        assertThat(TelemetryLosses.counts("otel.sdk.exporter.log.exported", refused, "spans", Loss.FAILED))
                .isFalse();
    }
}

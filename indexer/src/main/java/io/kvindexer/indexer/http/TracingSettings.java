package io.kvindexer.indexer.http;

import io.kvindexer.logging.LogSettings;
import java.util.Map;

/**
 * When HTTP requests get OpenTelemetry spans, read from the variables Dynamo's processes read: with {@code
 * DYN_LOGGING_JSONL} every request gets a span whose ids its JSON log lines carry; with {@code OTEL_EXPORT_ENABLED}
 * the spans also go to an OTLP collector. The SDK's own {@code OTEL_*} variables (endpoint, protocol, sampler,
 * headers, resource) are passed through as they are.
 *
 * @param spans  requests get spans
 * @param export spans are exported ({@code OTEL_EXPORT_ENABLED})
 * @param env    the process's environment, where the SDK reads its {@code OTEL_*} variables
 */
public record TracingSettings(boolean spans, boolean export, Map<String, String> env) {

    public static final TracingSettings OFF = new TracingSettings(false, false, Map.of());

    public TracingSettings {
        env = Map.copyOf(env);
    }

    /** @throws IllegalArgumentException naming a variable that is neither on nor off */
    public static TracingSettings fromEnv(Map<String, String> env) {
        boolean export = LogSettings.flag(env, "OTEL_EXPORT_ENABLED");
        boolean jsonl = LogSettings.flag(env, "DYN_LOGGING_JSONL");
        return new TracingSettings(export || jsonl, export, env);
    }
}

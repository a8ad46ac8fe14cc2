package io.kvindexer.indexer.http;

import io.kvindexer.logging.LineFormatter;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.logs.Logger;
import io.opentelemetry.api.logs.LoggerProvider;
import io.opentelemetry.api.logs.Severity;
import io.opentelemetry.context.Context;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;

/**
 * Sends each log record to the OTLP collector too, as Dynamo does with {@code OTEL_EXPORT_ENABLED}: the message as the
 * body, Dynamo's level name as the severity text, the logger as {@code target}, a stack trace as the record's
 * exception, and the writing thread's span (the request's) as its context, so the collector links it to the trace.
 * The SDK's own records stay out: a failed export would otherwise log itself into the next export.
 */
final class OtlpLogHandler extends Handler {

    private static final AttributeKey<String> TARGET = AttributeKey.stringKey("target");

    private final Logger logger;

    OtlpLogHandler(LoggerProvider provider) {
        this.logger = provider.get("io.kvindexer.indexer");
        setLevel(Level.ALL); // the loggers decide what is written, as for the console
    }

    @Override
    public void publish(LogRecord record) {
        String name = record.getLoggerName() == null ? "" : record.getLoggerName();
        if (!isLoggable(record) || name.startsWith("io.opentelemetry")) {
            return;
        }
        String level = LineFormatter.levelName(record.getLevel()); // ERROR, WARN, INFO, DEBUG, TRACE: OTel's names too
        var out = logger.logRecordBuilder()
                .setTimestamp(record.getInstant())
                .setSeverity(Severity.valueOf(level))
                .setSeverityText(level)
                .setBody(LineFormatter.message(record)) // as the console line has it
                .setAttribute(TARGET, name)
                .setContext(Context.current());
        if (record.getThrown() != null) {
            out.setException(record.getThrown());
        }
        out.emit();
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
}

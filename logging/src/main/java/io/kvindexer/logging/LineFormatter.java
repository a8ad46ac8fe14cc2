package io.kvindexer.logging;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.Map;
import java.util.logging.Formatter;
import java.util.logging.Level;
import java.util.logging.LogRecord;

/**
 * One line per record, as Dynamo's processes write them: readable ({@code TIME LEVEL target: message}) or, with
 * {@code DYN_LOGGING_JSONL}, one JSON object ({@code time}, {@code level}, {@code target}, {@code message}, {@code
 * error} with the stack trace when the record has one, and the writing thread's {@link LogContext}). The time has
 * microseconds and its offset ({@code Z} in UTC); the levels are Dynamo's names (ERROR, WARN, INFO, DEBUG, TRACE), so
 * one log query serves both.
 */
public final class LineFormatter extends Formatter {

    private static final JsonFactory JSON = new JsonFactory();

    private final boolean jsonl;
    private final DateTimeFormatter time;

    public LineFormatter(boolean jsonl, ZoneId zone) {
        this.jsonl = jsonl;
        this.time =
                DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSSXXX").withZone(zone);
    }

    /** Dynamo's name for a JUL level: SEVERE is ERROR, FINE DEBUG, FINER and FINEST TRACE. */
    public static String levelName(Level level) {
        int v = level.intValue();
        if (v >= Level.SEVERE.intValue()) {
            return "ERROR";
        } else if (v >= Level.WARNING.intValue()) {
            return "WARN";
        } else if (v >= Level.CONFIG.intValue()) {
            return "INFO";
        } else if (v >= Level.FINE.intValue()) {
            return "DEBUG";
        }
        return "TRACE";
    }

    @Override
    public String format(LogRecord record) {
        String when = time.format(record.getInstant());
        String level = levelName(record.getLevel());
        String target = record.getLoggerName() == null ? "" : record.getLoggerName();
        String message = formatMessage(record);
        boolean oneLine = target.startsWith(EXPORTER);
        String error = record.getThrown() == null
                ? null
                : oneLine ? causes(record.getThrown()) : stackTrace(record.getThrown());
        if (!jsonl) {
            String rest =
                    error == null ? "" : oneLine ? " (" + error + ")" : System.lineSeparator() + error.stripTrailing();
            return when + " " + level + " " + target + ": " + message + rest + System.lineSeparator();
        }
        StringWriter out = new StringWriter(message.length() + 128);
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("time", when);
            g.writeStringField("level", level);
            g.writeStringField("target", target);
            g.writeStringField("message", message);
            if (error != null) {
                g.writeStringField("error", error);
            }
            for (Map.Entry<String, String> f : LogContext.fields().entrySet()) {
                g.writeStringField(f.getKey(), f.getValue());
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a StringWriter does not fail
        }
        return out.append(System.lineSeparator()).toString();
    }

    /**
     * The OpenTelemetry exporters' loggers: a collector that cannot be reached is a condition of the network, not a
     * fault of ours, so their errors are one line (the causes' messages) instead of twenty lines of library frames.
     */
    private static final String EXPORTER = "io.opentelemetry.exporter";

    /** {@code "A: x; caused by B: y"}: each throwable of the chain as {@code toString()} gives it. */
    static String causes(Throwable thrown) {
        StringBuilder b = new StringBuilder(thrown.toString());
        int depth = 0;
        for (Throwable c = thrown.getCause(); c != null && c != thrown && depth < 8; c = c.getCause(), depth++) {
            b.append("; caused by ").append(c);
        }
        return b.toString();
    }

    private static String stackTrace(Throwable thrown) {
        StringWriter s = new StringWriter();
        try (PrintWriter w = new PrintWriter(s)) {
            thrown.printStackTrace(w);
        }
        return s.toString();
    }
}

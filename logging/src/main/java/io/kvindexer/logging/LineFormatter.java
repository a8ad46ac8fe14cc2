package io.kvindexer.logging;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.text.MessageFormat;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Map;
import java.util.logging.Formatter;
import java.util.logging.Level;
import java.util.logging.LogRecord;

/**
 * One line per record, as Dynamo's processes write them: readable ({@code TIME LEVEL target: message}) or, with
 * {@code DYN_LOGGING_JSONL}, one JSON object ({@code time}, {@code level}, {@code target}, {@code message}, {@code
 * error} with the stack trace when the record has one, and the writing thread's {@link LogContext}). The time has
 * microseconds and its offset ({@code Z} in UTC); the levels are Dynamo's names (ERROR, WARN, INFO, DEBUG, TRACE), so
 * one log query serves both. Placeholders are filled the same way under every default locale ({@code 4,000}, never
 * {@code 4.000} or {@code 4 000}), so a log query or a grep written on one host works on all.
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
        String message = message(record);
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

    /** JUL's placeholder filling, as {@link #formatMessage} does it, but in {@link Locale#ROOT}: see the class. */
    @Override
    public String formatMessage(LogRecord record) {
        return message(record);
    }

    /**
     * A record's message with its {@code {0}}, {@code {1}} … filled in {@link Locale#ROOT}; without parameters, or
     * without such a placeholder, the message as it is (JUL's rule: a lone brace is no pattern).
     */
    public static String message(LogRecord record) {
        String format = record.getMessage();
        Object[] params = record.getParameters();
        if (format == null || params == null || params.length == 0 || !hasPlaceholder(format)) {
            return format;
        }
        try {
            return new MessageFormat(format, Locale.ROOT).format(params);
        } catch (IllegalArgumentException e) {
            return format; // a malformed pattern: the text as written, like JUL
        }
    }

    private static boolean hasPlaceholder(String format) {
        for (int i = format.indexOf('{'); i >= 0 && i < format.length() - 1; i = format.indexOf('{', i + 1)) {
            if (format.charAt(i + 1) >= '0' && format.charAt(i + 1) <= '9') {
                return true;
            }
        }
        return false;
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

package io.kvindexer.logging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/** The environment variables Dynamo's processes log by, and the lines they give. */
class LogSettingsTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static LogRecord record(Level level, String message, Object... params) {
        LogRecord r = new LogRecord(level, message);
        r.setLoggerName("io.kvindexer.indexer.ingest.Stream");
        r.setInstant(Instant.parse("2026-12-06T11:40:01.123456Z"));
        r.setParameters(params);
        return r;
    }

    @Test
    void unsetVariablesKeepTheDefaults() {
        LogSettings s = LogSettings.fromEnv(Map.of());
        assertThat(s).isEqualTo(new LogSettings(false, false, null, Map.of(), List.of()));
        assertThat(LogSettings.fromEnv(Map.of("DYN_LOG", " ", "DYN_LOGGING_JSONL", "")))
                .isEqualTo(s);
    }

    @Test
    void dynLogTakesADefaultLevelAndLevelsPerTarget() {
        LogSettings s = LogSettings.fromEnv(Map.of(
                "DYN_LOG", "Debug, io.kvindexer.indexer.ingest=trace,io::helidon=ERROR,io.netty=off",
                "DYN_LOGGING_JSONL", "TRUE",
                "DYN_LOG_USE_LOCAL_TZ", "1"));
        assertThat(s.jsonl()).isTrue();
        assertThat(s.localTime()).isTrue();
        assertThat(s.root()).isEqualTo(Level.FINE);
        assertThat(s.targets())
                .containsOnly(
                        Map.entry("io.kvindexer.indexer.ingest", Level.FINEST),
                        Map.entry("io.helidon", Level.SEVERE),
                        Map.entry("io.netty", Level.OFF));
        assertThat(LogSettings.fromEnv(Map.of("DYN_LOG", "warn")).root()).isEqualTo(Level.WARNING);
    }

    @Test
    void aBadValueNamesTheVariableAndWhatIsWrong() {
        assertThatThrownBy(() -> LogSettings.fromEnv(Map.of("DYN_LOG", "info,io.kvindexer=verbose")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("DYN_LOG: unknown level \"verbose\" in \"info,io.kvindexer=verbose\""
                        + " (error, warn, info, debug, trace or off)");
        assertThatThrownBy(() -> LogSettings.fromEnv(Map.of("DYN_LOG", "=debug")))
                .hasMessage("DYN_LOG: no target before \"=\" in \"=debug\"");
        assertThatThrownBy(() -> LogSettings.fromEnv(Map.of("DYN_LOGGING_JSONL", "ture")))
                .hasMessage("DYN_LOGGING_JSONL must be true or false (1/0, yes/no, on/off), got \"ture\"");
    }

    @Test
    void aReadableLineHasUtcMicrosDynamosLevelTheTargetAndTheMessage() {
        LineFormatter f = new LineFormatter(false, ZoneOffset.UTC);
        assertThat(f.format(record(Level.WARNING, "gap of {0} on {1}", 3, "tcp://e:5557")))
                .isEqualTo("2026-12-06T11:40:01.123456Z WARN io.kvindexer.indexer.ingest.Stream: gap of 3 on"
                        + " tcp://e:5557" + System.lineSeparator());
        LogRecord failed = record(Level.SEVERE, "snapshot failed");
        failed.setThrown(new IOException("disk full"));
        String text = new LineFormatter(false, ZoneId.of("Asia/Kolkata")).format(failed);
        assertThat(text)
                .startsWith("2026-12-06T17:10:01.123456+05:30 ERROR io.kvindexer.indexer.ingest.Stream:"
                        + " snapshot failed" + System.lineSeparator() + "java.io.IOException: disk full");
        assertThat(text).contains("\tat io.kvindexer.logging.LogSettingsTest.").endsWith(System.lineSeparator());
    }

    /** Under a German or French default locale, numbers are written as under an English one. */
    @Test
    void numbersAreWrittenAlikeUnderEveryDefaultLocale() throws IOException {
        Locale before = Locale.getDefault();
        Locale format = Locale.getDefault(Locale.Category.FORMAT);
        Locale display = Locale.getDefault(Locale.Category.DISPLAY);
        try {
            for (Locale l : List.of(Locale.GERMANY, Locale.FRANCE, Locale.forLanguageTag("hi-IN"), Locale.US)) {
                Locale.setDefault(l);
                LogRecord r = record(Level.INFO, "stopping in {0} ms, {1} blocks ({2})", 5000, 1234567L, 0.5);
                assertThat(new LineFormatter(false, ZoneOffset.UTC).format(r))
                        .as("under %s", l)
                        .endsWith(": stopping in 5,000 ms, 1,234,567 blocks (0.5)" + System.lineSeparator());
                JsonNode json = JSON.readTree(new LineFormatter(true, ZoneOffset.UTC).format(r));
                assertThat(json.get("message").asText()).isEqualTo("stopping in 5,000 ms, 1,234,567 blocks (0.5)");
                assertThat(new LineFormatter(false, ZoneOffset.UTC).formatMessage(r))
                        .isEqualTo(LineFormatter.message(r));
            }
            // JUL's rules stay: no parameters or no placeholder, the text as written
            assertThat(LineFormatter.message(record(Level.INFO, "{0} of {", 4000)))
                    .isEqualTo("{0} of {");
            assertThat(LineFormatter.message(record(Level.INFO, "a {b} of {0}")))
                    .isEqualTo("a {b} of {0}");
            assertThat(LineFormatter.message(record(Level.INFO, "set {x}", 4000)))
                    .isEqualTo("set {x}");
        } finally {
            Locale.setDefault(before);
            Locale.setDefault(Locale.Category.FORMAT, format);
            Locale.setDefault(Locale.Category.DISPLAY, display);
        }
    }

    @Test
    void aJsonLineIsOneObjectThatReadsBackAsWritten() throws IOException {
        LineFormatter f = new LineFormatter(true, ZoneOffset.UTC);
        String awkward = "quote \" backslash \\ tab \t newline \n bell \u0007 snowman \u2603";
        String line = f.format(record(Level.FINE, "{0}", awkward));
        assertThat(line).endsWith(System.lineSeparator());
        assertThat(line.strip().lines()).hasSize(1);
        JsonNode n = JSON.readTree(line);
        assertThat(n.get("time").asText()).isEqualTo("2026-12-06T11:40:01.123456Z");
        assertThat(n.get("level").asText()).isEqualTo("DEBUG");
        assertThat(n.get("target").asText()).isEqualTo("io.kvindexer.indexer.ingest.Stream");
        assertThat(n.get("message").asText()).isEqualTo(awkward);
        assertThat(n.has("error")).isFalse();

        LogRecord failed = record(Level.FINER, "closing failed");
        failed.setThrown(new IllegalStateException("closed twice"));
        JsonNode e = JSON.readTree(f.format(failed));
        assertThat(e.get("level").asText()).isEqualTo("TRACE");
        assertThat(e.get("error").asText()).startsWith("java.lang.IllegalStateException: closed twice");
    }

    @Test
    void anExportersFailureIsOneLineWithItsCauses() throws IOException {
        LogRecord failed = record(Level.SEVERE, "Failed to export 3 spans. The request could not be executed.");
        failed.setLoggerName("io.opentelemetry.exporter.otlp.internal.GrpcExporter");
        failed.setThrown(new IOException(
                "Failed to connect to localhost/127.0.0.1:4317", new java.net.ConnectException("Connection refused")));
        String causes = "java.io.IOException: Failed to connect to localhost/127.0.0.1:4317; caused by"
                + " java.net.ConnectException: Connection refused";

        assertThat(new LineFormatter(false, ZoneOffset.UTC).format(failed))
                .isEqualTo("2026-12-06T11:40:01.123456Z ERROR io.opentelemetry.exporter.otlp.internal.GrpcExporter:"
                        + " Failed to export 3 spans. The request could not be executed. (" + causes + ")"
                        + System.lineSeparator());
        JsonNode n = JSON.readTree(new LineFormatter(true, ZoneOffset.UTC).format(failed));
        assertThat(n.get("error").asText()).isEqualTo(causes);

        failed.setLoggerName("io.opentelemetry.sdk.trace.SdkTracerProvider");
        assertThat(new LineFormatter(false, ZoneOffset.UTC).format(failed))
                .as("other libraries' errors keep their stack traces")
                .contains("\tat io.kvindexer.logging.LogSettingsTest.");
    }

    @Test
    void dynamoVariablesNotReadHereAreEachAWarning() {
        assertThat(LogSettings.fromEnv(Map.of("DYN_LOGGING_SPAN_EVENTS", "false"))
                        .unread())
                .isEmpty();
        assertThat(LogSettings.fromEnv(Map.of("DYN_LOGGING_CONFIG_PATH", "/etc/d.toml", "DYN_LOGGING_SPAN_EVENTS", "1"))
                        .unread())
                .satisfiesExactly(
                        w -> assertThat(w).startsWith("DYN_LOGGING_CONFIG_PATH (/etc/d.toml) is not read"),
                        w -> assertThat(w).startsWith("DYN_LOGGING_SPAN_EVENTS is not read"));
    }

    @Test
    void aJsonLineCarriesTheWritingThreadsContextAReadableOneDoesNot() throws Exception {
        LogContext.install(() -> Thread.currentThread().getName().equals("in-a-span")
                ? Map.of("trace_id", "4bf92f3577b34da6a3ce929d0e0e4736", "span_id", "00f067aa0ba902b7")
                : Map.of());
        try {
            LineFormatter jsonl = new LineFormatter(true, ZoneOffset.UTC);
            LineFormatter readable = new LineFormatter(false, ZoneOffset.UTC);
            String[] inSpan = new String[2];
            Thread t = new Thread(
                    () -> {
                        inSpan[0] = jsonl.format(record(Level.INFO, "registered"));
                        inSpan[1] = readable.format(record(Level.INFO, "registered"));
                    },
                    "in-a-span");
            t.start();
            t.join();
            JsonNode line = new ObjectMapper().readTree(inSpan[0]);
            assertThat(line.get("trace_id").asText()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
            assertThat(line.get("span_id").asText()).isEqualTo("00f067aa0ba902b7");
            assertThat(inSpan[1]).doesNotContain("4bf92f35");
            assertThat(new ObjectMapper()
                            .readTree(jsonl.format(record(Level.INFO, "outside")))
                            .has("trace_id"))
                    .isFalse();
        } finally {
            LogContext.install(Map::of);
        }
    }

    @Test
    void applyPutsTheFormatOnTheRootHandlersAndTheLevelsOnTheLoggers() {
        Logger top = Logger.getLogger("");
        Map<Handler, Object[]> before = new HashMap<>();
        for (Handler h : top.getHandlers()) {
            before.put(h, new Object[] {h.getFormatter(), h.getLevel()});
        }
        List<String> touched = List.of("t.server", "t.server.Start", "t.mine");
        try {
            Map<String, Level> quieter = Map.of("t.server", Level.WARNING, "t.server.Start", Level.INFO);
            LogSettings.fromEnv(Map.of("DYN_LOG", "error,t.mine=debug", "DYN_LOGGING_JSONL", "on"))
                    .apply(quieter);
            assertThat(top.getHandlers()).isNotEmpty();
            for (Handler h : top.getHandlers()) {
                assertThat(h.getFormatter()).isInstanceOf(LineFormatter.class);
                assertThat(h.getLevel()).isEqualTo(Level.ALL);
            }
            assertThat(top.getLevel()).isEqualTo(Level.SEVERE);
            System.gc(); // a level must outlive the moment nothing else holds its logger
            Logger mine = Logger.getLogger("t.mine.Child");
            assertThat(mine.isLoggable(Level.FINE)).isTrue();
            assertThat(mine.isLoggable(Level.FINER)).isFalse();
            assertThat(Logger.getLogger("t.other").isLoggable(Level.WARNING)).isFalse();
            // the process's quieter levels never show more than DYN_LOG's default
            assertThat(Logger.getLogger("t.server.Start").isLoggable(Level.INFO))
                    .isFalse();
            assertThat(Logger.getLogger("t.server.Start").isLoggable(Level.SEVERE))
                    .isTrue();

            LogSettings.fromEnv(Map.of("DYN_LOG", "debug,t.server.Start=trace")).apply(quieter);
            assertThat(Logger.getLogger("t.server.Other").isLoggable(Level.INFO))
                    .isFalse();
            assertThat(Logger.getLogger("t.server.Other").isLoggable(Level.WARNING))
                    .isTrue();
            assertThat(Logger.getLogger("t.server.Start").isLoggable(Level.FINEST))
                    .isTrue();
            assertThat(Logger.getLogger("t.other").isLoggable(Level.FINE)).isTrue();

            LogSettings.fromEnv(Map.of()).apply(quieter);
            assertThat(top.getLevel()).isEqualTo(Level.INFO);
            assertThat(Logger.getLogger("t.server.Start").isLoggable(Level.INFO))
                    .isTrue();
            assertThat(Logger.getLogger("t.server.Other").isLoggable(Level.INFO))
                    .isFalse();
        } finally {
            top.setLevel(Level.INFO);
            touched.forEach(name -> Logger.getLogger(name).setLevel(null));
            before.forEach((h, was) -> {
                h.setFormatter((Formatter) was[0]);
                h.setLevel((Level) was[1]);
            });
        }
    }
}

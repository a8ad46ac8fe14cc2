package io.kvindexer.logging;

import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The log format and levels from the environment variables Dynamo's processes read, so that a deployment written for
 * {@code python -m dynamo.indexer} logs the same way here: {@code DYN_LOGGING_JSONL} (JSON lines instead of readable
 * ones), {@code DYN_LOG} ({@code <default level>,<target>=<level>,...}; a target is a logger name, a Java package or
 * class, {@code ::} read as {@code .}) and {@code DYN_LOG_USE_LOCAL_TZ} (local time instead of UTC).
 *
 * @param jsonl     one JSON object per line
 * @param localTime timestamps in the JVM's time zone, with its offset
 * @param root      the default level, or null to keep the configured one (INFO)
 * @param targets   levels of single loggers and their children, in the order given
 * @param unread    a warning for each Dynamo variable that is set and not read here ({@code DYN_LOGGING_CONFIG_PATH},
 *     its TOML file; {@code DYN_LOGGING_SPAN_EVENTS}, its span entry and close lines)
 */
public record LogSettings(
        boolean jsonl, boolean localTime, Level root, Map<String, Level> targets, List<String> unread) {

    /** Loggers whose level was set here: JUL holds loggers weakly, and a collected one forgets its level. */
    private static final List<Logger> KEPT = new ArrayList<>();

    public LogSettings {
        targets = Map.copyOf(targets);
        unread = List.copyOf(unread);
    }

    /**
     * Reads the three variables; unset or empty ones keep the defaults (readable lines, UTC, the configured levels).
     *
     * @throws IllegalArgumentException naming the variable and what in it is wrong
     */
    public static LogSettings fromEnv(Map<String, String> env) {
        boolean jsonl = flag(env, "DYN_LOGGING_JSONL");
        boolean localTime = flag(env, "DYN_LOG_USE_LOCAL_TZ");
        String spec = env.getOrDefault("DYN_LOG", "").strip();
        Level root = null;
        Map<String, Level> targets = new LinkedHashMap<>();
        for (String part : spec.split(",")) {
            String directive = part.strip();
            if (directive.isEmpty()) {
                continue;
            }
            int eq = directive.indexOf('=');
            if (eq < 0) {
                root = level(directive, spec);
                continue;
            }
            String target = directive.substring(0, eq).strip().replace("::", ".");
            if (target.isEmpty()) {
                throw new IllegalArgumentException("DYN_LOG: no target before \"=\" in \"" + spec + "\"");
            }
            targets.put(target, level(directive.substring(eq + 1).strip(), spec));
        }
        List<String> unread = new ArrayList<>();
        if (!env.getOrDefault("DYN_LOGGING_CONFIG_PATH", "").isBlank()) {
            unread.add("DYN_LOGGING_CONFIG_PATH (" + env.get("DYN_LOGGING_CONFIG_PATH") + ") is not read: DYN_LOG sets"
                    + " the levels and DYN_LOGGING_JSONL the format");
        }
        if (flag(env, "DYN_LOGGING_SPAN_EVENTS")) {
            unread.add("DYN_LOGGING_SPAN_EVENTS is not read: spans are not logged as lines; OTEL_EXPORT_ENABLED"
                    + " sends them to a collector");
        }
        return new LogSettings(jsonl, localTime, root, targets, unread);
    }

    /**
     * Puts the format on every handler of the root logger and sets the levels; once, after JUL is configured.
     *
     * @param quieter the process's own levels for chatty libraries (a web server's, say), kept as long as they show
     *     less than {@code DYN_LOG}'s default level, as Dynamo keeps its own for its HTTP libraries; a target that
     *     {@code DYN_LOG} names gets what it says
     */
    public void apply(Map<String, Level> quieter) {
        Logger top = Logger.getLogger("");
        LineFormatter formatter = new LineFormatter(jsonl, localTime ? ZoneId.systemDefault() : ZoneOffset.UTC);
        for (Handler h : top.getHandlers()) {
            h.setFormatter(formatter);
            h.setLevel(Level.ALL); // the loggers decide what is written
        }
        Level base = root == null ? Level.INFO : root;
        top.setLevel(base);
        Map<String, Level> levels = new LinkedHashMap<>();
        quieter.forEach((name, level) -> levels.put(name, level.intValue() >= base.intValue() ? level : base));
        levels.putAll(targets);
        synchronized (KEPT) {
            levels.forEach((name, level) -> {
                Logger logger = Logger.getLogger(name);
                logger.setLevel(level);
                KEPT.add(logger);
            });
        }
        unread.forEach(Logger.getLogger(LogSettings.class.getName())::warning);
    }

    /**
     * A Dynamo on/off variable: unset or empty is off.
     *
     * @throws IllegalArgumentException naming the variable when its value is neither
     */
    public static boolean flag(Map<String, String> env, String name) {
        String value = env.getOrDefault(name, "").strip().toLowerCase(Locale.ROOT);
        return switch (value) {
            case "1", "true", "yes", "on" -> true;
            case "", "0", "false", "no", "off" -> false;
            default ->
                throw new IllegalArgumentException(
                        name + " must be true or false (1/0, yes/no, on/off), got \"" + env.get(name) + "\"");
        };
    }

    private static Level level(String name, String spec) {
        return switch (name.toLowerCase(Locale.ROOT)) {
            case "error" -> Level.SEVERE;
            case "warn", "warning" -> Level.WARNING;
            case "info" -> Level.INFO;
            case "debug" -> Level.FINE;
            case "trace" -> Level.FINEST;
            case "off" -> Level.OFF;
            default ->
                throw new IllegalArgumentException("DYN_LOG: unknown level \"" + name + "\" in \"" + spec
                        + "\" (error, warn, info, debug, trace or off)");
        };
    }
}

package io.kvindexer.indexer.testkit;

import java.text.MessageFormat;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * The warnings one class logs while a test runs, formatted as a log line shows them: attached to its JUL logger
 * (System.Logger goes there), detached on close.
 */
public final class LogCapture implements AutoCloseable {

    private final Logger logger;
    private final List<String> warnings = new CopyOnWriteArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord r) {
            if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
                Object[] params = r.getParameters();
                warnings.add(params == null ? r.getMessage() : MessageFormat.format(r.getMessage(), params));
            }
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };

    private LogCapture(String loggerName) {
        this.logger = Logger.getLogger(loggerName);
        logger.addHandler(handler);
    }

    /** Starts collecting what {@code source} logs at WARNING and above. */
    public static LogCapture warningsOf(Class<?> source) {
        return new LogCapture(source.getName());
    }

    /** As {@link #warningsOf(Class)}, for a class the test's package cannot name. */
    public static LogCapture warningsOf(String loggerName) {
        return new LogCapture(loggerName);
    }

    /** The warnings so far, oldest first. */
    public List<String> warnings() {
        return List.copyOf(warnings);
    }

    @Override
    public void close() {
        logger.removeHandler(handler);
    }
}

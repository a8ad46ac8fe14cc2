package io.kvindexer.bench;

import io.kvindexer.logging.LogSettings;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.logging.Level;
import picocli.CommandLine.Command;

/**
 * What every picocli benchmark command shares: {@code --help} and {@code --version}, its options listed in the order
 * they are declared, each with its default value (so no description repeats it). Subclasses inherit these command
 * attributes and add their name and description; their {@link #call()} returns the exit code.
 */
@Command(mixinStandardHelpOptions = true, sortOptions = false, showDefaultValues = true)
abstract class BenchCommand implements Callable<Integer> {

    static {
        // the indexer's log lines among the figures read as the indexer writes them (one line each, DYN_LOG and
        // DYN_LOGGING_JSONL honoured), not in JUL's two-line default; the web server's from WARN up
        LogSettings.fromEnv(System.getenv()).apply(Map.of("io.helidon", Level.WARNING));
    }
}

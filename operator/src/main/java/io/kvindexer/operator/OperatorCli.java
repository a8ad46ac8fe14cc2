package io.kvindexer.operator;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The operator's command line and environment, parsed with picocli as the indexer's is: a bad flag or value is one
 * line naming it (never a stack trace), {@code --help} prints the usage. Environment variables come in as a map so
 * tests never touch the process env.
 */
@Command(
        name = "kv-indexer-operator",
        mixinStandardHelpOptions = true,
        versionProvider = OperatorCli.Version.class,
        sortOptions = false,
        description = "Kubernetes operator for kv-indexer: runs KvIndexer replicas and registers KvWorker engine pods.",
        footer = {
            "",
            "Environment:",
            // picocli wraps a footer line wider than its 80 columns at column 0: keep each within them
            "  WATCH_NAMESPACES  comma-separated namespaces both controllers watch",
            "                    (unset or empty: all)",
            "  POD_NAME, POD_NAMESPACE",
            "                    the operator's own pod (downward API); with the",
            "                    service-account token they turn leader election on",
            "  KV_INDEXER_AUTH_TOKEN",
            "                    bearer token the operator sends to the indexer replicas",
            "  DYN_LOGGING_JSONL true: log JSON lines (time, level, target, message)",
            "  DYN_LOG           levels: <default>,<logger>=<level>,... (error, warn,",
            "                    info, debug, trace, off; default info)",
            "  DYN_LOG_USE_LOCAL_TZ",
            "                    true: log times in local time (default UTC)"
        })
public final class OperatorCli {

    /** A bad flag, value or environment variable: the message is the one line printed before exiting. */
    public static final class UsageException extends Exception {
        public UsageException(String message) {
            super(message);
        }
    }

    /** What the command line asks for: the options to run with, or (options null) the help or version text. */
    public record Parsed(Options options, String helpText) {}

    /**
     * @param watchNamespaces empty = all namespaces
     */
    public record Options(int probePort, Duration resync, boolean leaderElection, Set<String> watchNamespaces) {}

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = OperatorCli.class.getPackage().getImplementationVersion();
            return new String[] {"kv-indexer-operator " + (v == null ? "dev" : v)};
        }
    }

    @Option(
            names = "--probe-port",
            paramLabel = "PORT",
            description = "port of /healthz, /readyz and /metrics (default: ${DEFAULT-VALUE}; 0 picks a free one)")
    int probePort = 8081;

    @Option(
            names = "--resync-seconds",
            paramLabel = "SECONDS",
            description = "periodic reconcile of every resource (default: ${DEFAULT-VALUE})")
    long resyncSeconds = 30;

    @Option(
            names = "--leader-election",
            arity = "0..1",
            fallbackValue = "true",
            paramLabel = "true|false",
            description = "take a Lease before reconciling, when running in a cluster (default: ${DEFAULT-VALUE};"
                    + " --leader-election=false switches it off)")
    boolean leaderElection = true;

    private OperatorCli() {}

    /** Parses flags and environment; throws with a one-line message naming the flag or variable at fault. */
    public static Parsed parse(String[] args, Map<String, String> env) throws UsageException {
        OperatorCli cli = new OperatorCli();
        CommandLine cmd = new CommandLine(cli);
        try {
            cmd.parseArgs(args);
        } catch (CommandLine.ParameterException e) {
            throw new UsageException(e.getMessage().strip().replaceAll("\\s*\\R\\s*", " "));
        }
        if (cmd.isUsageHelpRequested() || cmd.isVersionHelpRequested()) {
            StringWriter out = new StringWriter();
            if (cmd.isUsageHelpRequested()) {
                cmd.usage(new PrintWriter(out));
            } else {
                cmd.printVersionHelp(new PrintWriter(out));
            }
            return new Parsed(null, out.toString());
        }
        return new Parsed(cli.options(env), null);
    }

    private Options options(Map<String, String> env) throws UsageException {
        if (probePort < 0 || probePort > 65535) {
            throw new UsageException("invalid value for --probe-port: " + probePort + " (expected 0..65535)");
        }
        if (resyncSeconds < 1) {
            throw new UsageException("invalid value for --resync-seconds: " + resyncSeconds + " (expected >= 1)");
        }
        Set<String> namespaces;
        try {
            namespaces = OperatorSettings.parseWatchNamespaces(env.get(OperatorSettings.WATCH_NAMESPACES_ENV));
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
        return new Options(probePort, Duration.ofSeconds(resyncSeconds), leaderElection, namespaces);
    }
}

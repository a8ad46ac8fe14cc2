package io.kvindexer.indexer;

import io.kvindexer.indexer.common.BearerTokens;
import io.kvindexer.indexer.common.Tenants;
import io.kvindexer.indexer.http.TracingSettings;
import io.kvindexer.indexer.index.IndexOptions;
import io.kvindexer.indexer.recovery.PeerCalls;
import io.kvindexer.indexer.recovery.PeerDiscovery;
import io.kvindexer.indexer.registry.PeerUrl;
import io.kvindexer.indexer.registry.Registration;
import io.kvindexer.indexer.registry.UnsignedParse;
import io.kvindexer.indexer.registry.WorkerEntry;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The command line of {@code python -m dynamo.indexer} (compatibility.md, Command line and environment) plus our additions, turned into an
 * {@link IndexerConfig}. Environment variables come in as a map so tests never touch the process env.
 */
@Command(
        name = "kv-indexer",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = "Standalone KV-cache indexer (drop-in for `python -m dynamo.indexer`).",
        footer = {
            "",
            "Environment:",
            // picocli wraps a footer line wider than its 80 columns at column 0: keep each within them
            "  DYN_ROUTER_MIN_INITIAL_WORKERS  keep /ready and /query* closed until this",
            "                                  many worker instances are registered",
            "                                  (unset, empty or 0: no wait)",
            "  DYN_KV_INDEXER_TEST_ENDPOINTS   1/true/yes/on mounts /test/pause_listener",
            "                                  and /test/resume_listener",
            "  KV_INDEXER_AUTH_TOKEN           bearer token (when no --auth-token-file is",
            "                                  given)",
            "  DYN_LOGGING_JSONL               true: log JSON lines (time, level,",
            "                                  target, message)",
            "  DYN_LOG                         levels: <default>,<logger>=<level>,...",
            "                                  (error, warn, info, debug, trace, off;",
            "                                  default info)",
            "  DYN_LOG_USE_LOCAL_TZ            true: log times in local time (default",
            "                                  UTC)",
            "  OTEL_EXPORT_ENABLED             true: send a span per API request, and",
            "                                  the log records, over OTLP (gRPC to",
            "                                  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,",
            "                                  default http://localhost:4317; service",
            "                                  OTEL_SERVICE_NAME, default kv-indexer)"
        })
public final class IndexerCli {

    /**
     * What {@link #parse} found: either a config to run, or the help/version text that was asked for; {@code
     * aotTraining}: run {@link AotTraining} instead of serving; {@code shutdownDelay}: how long a SIGTERM keeps the
     * replica answering, not ready, before it stops.
     */
    public record Parsed(IndexerConfig config, String helpText, boolean aotTraining, Duration shutdownDelay) {}

    @Option(
            names = "--port",
            paramLabel = "PORT",
            description = "HTTP port (default: ${DEFAULT-VALUE}; 0 picks a free one)")
    int port = IndexerConfig.DEFAULT_PORT;

    @Option(names = "--host", paramLabel = "ADDR", description = "HTTP bind address (default: ${DEFAULT-VALUE})")
    String host = "0.0.0.0";

    @Option(
            names = "--threads",
            paramLabel = "N",
            description = "index writer threads (default: ${DEFAULT-VALUE}; 0 or 1: one)")
    int threads = IndexOptions.DEFAULT_WRITER_THREADS;

    @Option(
            names = "--index-shards",
            paramLabel = "N",
            description = "shards per index, each written by its own writer threads; more use more cores for writes "
                    + "and more memory for blocks that workers of several shards share (default: ${DEFAULT-VALUE}; "
                    + "at most --threads)")
    int indexShards = IndexOptions.DEFAULT_SHARDS;

    @Option(
            names = "--block-size",
            paramLabel = "TOKENS",
            description = "block size of the --workers registrations (required with --workers)")
    String blockSize;

    @Option(
            names = "--workers",
            paramLabel = "LIST",
            description = "initial workers: instance_id[:dp_rank]=zmq_endpoint,... (dp_rank defaults to 0)")
    String workers;

    @Option(
            names = "--model-name",
            paramLabel = "NAME",
            description = "model of the --workers (default: ${DEFAULT-VALUE})")
    String modelName = IndexerConfig.DEFAULT_MODEL;

    @Option(
            names = {"--tenant-id", "--routing-group"},
            paramLabel = "ID",
            description = "tenant of the --workers; --routing-group is Dynamo's newer name for it (default:"
                    + " ${DEFAULT-VALUE})")
    String tenantId = Tenants.DEFAULT;

    @Option(
            names = "--peers",
            paramLabel = "URLS",
            description = "comma-separated peer indexer base URLs to recover the index from at startup")
    String peers;

    @Option(
            names = "--peers-dns",
            paramLabel = "NAME:PORT",
            description = "also recover from every address NAME"
                    + " resolves to at startup (e.g. the indexers' headless Service), this process excluded")
    String peersDns;

    @Option(
            names = "--peers-dns-schemes",
            paramLabel = "LIST",
            description = "the schemes each --peers-dns address is asked in, in order: http, https, or both"
                    + " comma-separated, e.g. https,http while a change of TLS rolls through the replicas (default:"
                    + " the one this replica serves)")
    String peersDnsSchemes;

    @Option(
            names = "--peer-auth-token-file",
            paramLabel = "FILE",
            description = "send this file's token to peers when recovering from them, instead of this replica's own"
                    + " (--auth-token-file, KV_INDEXER_AUTH_TOKEN); never asked of callers")
    Path peerAuthTokenFile;

    @Option(
            names = "--demo",
            description = "start embedded engine simulators, register them and print example curl commands")
    boolean demo;

    @Option(
            names = "--mix-cache-salt",
            description = "mix a query's cache_salt into its block hashes (Dynamo G3); off: accepted and ignored (G2)")
    boolean mixCacheSalt;

    @Option(
            names = "--max-body-bytes",
            paramLabel = "BYTES",
            description = "request body limit of /register and other small POSTs (default: ${DEFAULT-VALUE})")
    long maxBodyBytes = IndexerConfig.DEFAULT_MAX_BODY;

    @Option(
            names = "--max-query-body-bytes",
            paramLabel = "BYTES",
            description = "request body limit of /query, /query_by_hash and /query_tiered_by_hash (default:"
                    + " ${DEFAULT-VALUE}, as Dynamo)")
    long maxQueryBodyBytes = IndexerConfig.DEFAULT_MAX_QUERY_BODY;

    @Option(
            names = "--aot-training",
            description = "run the service's own workload once on loopback and exit: the training run of a JVM AOT"
                    + " cache (-XX:AOTCacheOutput); docs/operations.md, Startup")
    boolean aotTraining;

    @Option(
            names = "--shutdown-delay",
            paramLabel = "DURATION",
            description = "on SIGTERM, go on answering this long with /ready at 503 before the server stops, so"
                    + " that Services and routers stop sending first, e.g. 5s (default: ${DEFAULT-VALUE}; at most 5m)")
    String shutdownDelay = "0";

    /**
     * 5 minutes, the operator's bound too ({@code spec.shutdownDelaySeconds} up to 300): Services and routers
     * notice a replica leaving within seconds, and a stop that waits longer is more likely a typo ({@code 5h}).
     */
    static final Duration MAX_SHUTDOWN_DELAY = Duration.ofMinutes(5);

    @CommandLine.Mixin
    HardeningOptions hardening = new HardeningOptions();

    @CommandLine.Mixin
    StateOptions state = new StateOptions();

    @CommandLine.Mixin
    ExpiryOptions expiry = new ExpiryOptions();

    @CommandLine.Mixin
    TlsOptions tls = new TlsOptions();

    @CommandLine.Mixin
    IngestOptions ingest = new IngestOptions();

    @CommandLine.Mixin
    AccessLogOptions accessLog = new AccessLogOptions();

    /**
     * Dynamo's flags whose empty value it reads as nothing, and so do we (compatibility.md, Command line and
     * environment): a list with its empty entries skipped, or a name that may be empty. Any other flag given an empty
     * value is a usage error: an empty path would mean the working directory, an empty TTL no TTL, both silently.
     */
    static final Set<String> EMPTY_ALLOWED = Set.of("--workers", "--peers", "--model-name", "--tenant-id");

    IndexerCli() {}

    /** Parses flags and environment; throws with a one-line message naming the flag or variable at fault. */
    public static Parsed parse(String[] args, Map<String, String> env) throws ConfigException {
        IndexerCli cli = new IndexerCli();
        CommandLine cmd = new CommandLine(cli);
        try {
            cmd.parseArgs(args);
        } catch (CommandLine.ParameterException e) {
            throw new ConfigException(usageError(e));
        }
        refuseEmptyValues(cmd.getParseResult());
        if (cmd.isUsageHelpRequested() || cmd.isVersionHelpRequested()) {
            var out = new java.io.StringWriter();
            if (cmd.isUsageHelpRequested()) {
                cmd.usage(new PrintWriter(out));
            } else {
                out.write("kv-indexer 0.1.0\n");
            }
            return new Parsed(null, out.toString(), false, Duration.ZERO);
        }
        return new Parsed(
                cli.toConfig(env),
                null,
                cli.aotTraining,
                DurationFlags.parse("--shutdown-delay", cli.shutdownDelay, MAX_SHUTDOWN_DELAY));
    }

    /** An empty (or blank) value of a flag not in {@link #EMPTY_ALLOWED}, refused by its name. */
    private static void refuseEmptyValues(CommandLine.ParseResult parsed) throws ConfigException {
        for (CommandLine.Model.OptionSpec option : parsed.matchedOptions()) {
            boolean allowed = Arrays.stream(option.names()).anyMatch(EMPTY_ALLOWED::contains);
            if (!allowed && option.originalStringValues().stream().anyMatch(String::isBlank)) {
                throw new ConfigException("invalid value for " + option.longestName()
                        + ": empty (give a value, or leave the flag out for its default)");
            }
        }
    }

    private IndexerConfig toConfig(Map<String, String> env) throws ConfigException {
        if (port < 0 || port > 65535) {
            throw new ConfigException("invalid value for --port: " + port + " (expected 0..65535)");
        }
        if (threads < 0) {
            throw new ConfigException("invalid value for --threads: " + threads + " (expected >= 0)");
        }
        if (indexShards < 1 || indexShards > Math.max(1, threads)) {
            throw new ConfigException("invalid value for --index-shards: " + indexShards + " (expected 1..--threads)");
        }
        if (maxBodyBytes <= 0) {
            throw new ConfigException("invalid value for --max-body-bytes: " + maxBodyBytes + " (must be > 0)");
        }
        if (maxQueryBodyBytes <= 0) {
            throw new ConfigException(
                    "invalid value for --max-query-body-bytes: " + maxQueryBodyBytes + " (must be > 0)");
        }
        Integer bs = null;
        if (blockSize != null) {
            try {
                bs = UnsignedParse.u32(blockSize);
            } catch (NumberFormatException e) {
                throw new ConfigException("invalid value for --block-size: `" + blockSize + "`: " + e.getMessage());
            }
            String problem = Registration.blockSizeProblem(bs);
            if (problem != null) {
                throw new ConfigException("invalid value for --block-size: " + problem);
            }
        }
        checkName("--model-name", modelName);
        checkName("--tenant-id", tenantId);
        List<WorkerEntry> workerList = List.of();
        if (workers != null) {
            if (bs == null) {
                throw new ConfigException("--block-size is required when --workers is specified");
            }
            try {
                workerList = WorkerEntry.parseList(workers);
            } catch (WorkerEntry.InvalidWorkerEntry e) {
                throw new ConfigException("invalid value for --workers: " + e.getMessage());
            }
        }
        List<String> peerList = parsePeers(peers);
        if (peerList.size() > hardening.limits().maxPeers()) {
            throw new ConfigException("invalid value for --peers: " + peerList.size() + " distinct peers; the limit is "
                    + hardening.limits().maxPeers() + " (--max-peers)");
        }
        for (String p : peerList) {
            String problem = PeerUrl.problem(p);
            if (problem != null) {
                throw new ConfigException("invalid value for --peers: " + problem);
            }
        }
        PeerDiscovery.Target dnsTarget = null;
        if (peersDns != null) {
            try {
                dnsTarget = PeerDiscovery.Target.parse(peersDns.strip());
            } catch (IllegalArgumentException e) {
                throw new ConfigException("invalid value for --peers-dns: " + e.getMessage());
            }
        }
        PeerCalls peerCalls = peerCalls(dnsTarget != null);
        return new IndexerConfig(
                host,
                port,
                Math.max(1, threads),
                indexShards,
                bs,
                workerList,
                modelName,
                tenantId,
                peerList,
                dnsTarget,
                peerCalls,
                demo,
                mixCacheSalt,
                maxQueryBodyBytes,
                maxBodyBytes,
                minInitialWorkers(env.get("DYN_ROUTER_MIN_INITIAL_WORKERS")),
                testEndpoints(env.get("DYN_KV_INDEXER_TEST_ENDPOINTS")),
                IndexerConfig.DEFAULT_RECOVERY_DELAY,
                Duration.ofSeconds(10),
                hardening.limits(),
                hardening.authToken(env),
                state.snapshotDir,
                state.snapshotInterval(),
                state.unregisterGrace(),
                expiry.policy(),
                tls.security(hardening.authTokenFile),
                ingest.settings(),
                accessLog.settings(),
                tracing(env));
    }

    /** {@code --peers-dns-schemes} (only with {@code --peers-dns}) and {@code --peer-auth-token-file}. */
    private PeerCalls peerCalls(boolean dns) throws ConfigException {
        List<String> schemes = List.of();
        if (peersDnsSchemes != null) {
            if (!dns) {
                throw new ConfigException("--peers-dns is required when --peers-dns-schemes is specified");
            }
            schemes = Arrays.stream(peersDnsSchemes.split(",", -1))
                    .map(s -> s.strip().toLowerCase(Locale.ROOT))
                    .toList();
            if (!PeerCalls.SCHEMES.containsAll(schemes)
                    || schemes.stream().distinct().count() != schemes.size()) {
                throw new ConfigException("invalid value for --peers-dns-schemes: `" + peersDnsSchemes
                        + "` (expected http, https, or both comma-separated, each once)");
            }
        }
        String token = null;
        if (peerAuthTokenFile != null) {
            try {
                token = BearerTokens.read(peerAuthTokenFile);
            } catch (IOException e) {
                throw new ConfigException("invalid value for --peer-auth-token-file: " + e.getMessage());
            }
        }
        return new PeerCalls(schemes, token);
    }

    private static TracingSettings tracing(Map<String, String> env) throws ConfigException {
        try {
            return TracingSettings.fromEnv(env);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage());
        }
    }

    /**
     * compatibility.md, Command line and environment: split on commas, drop empty entries, trim the rest; a repeated
     * entry is kept once, as the peer list keeps it, so that --max-peers counts what is kept.
     */
    static List<String> parsePeers(String value) {
        Set<String> out = new LinkedHashSet<>();
        if (value == null) {
            return List.of();
        }
        for (String p : value.split(",", -1)) {
            if (!p.isEmpty()) {
                String t = p.trim();
                if (!t.isEmpty()) {
                    out.add(t);
                }
            }
        }
        return List.copyOf(out);
    }

    /**
     * Unset, empty or 0 disables the gate (compatibility.md, Where we differ on purpose: the documented behaviour, where Dynamo's code rejects the
     * empty string); anything else must be a plain non-negative decimal.
     */
    static int minInitialWorkers(String value) throws ConfigException {
        if (value == null || value.isEmpty()) {
            return 0;
        }
        try {
            long n = UnsignedParse.u64(value);
            if (value.startsWith("+")) {
                throw new NumberFormatException("invalid digit found in string");
            }
            return n < 0 || n > Integer.MAX_VALUE ? Integer.MAX_VALUE : (int) n;
        } catch (NumberFormatException e) {
            throw new ConfigException("DYN_ROUTER_MIN_INITIAL_WORKERS must be a non-negative integer, got \"" + value
                    + "\": " + e.getMessage());
        }
    }

    static boolean testEndpoints(String value) {
        if (value == null) {
            return false;
        }
        return switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "1", "true", "yes", "on" -> true;
            default -> false;
        };
    }

    /**
     * picocli's own line (an unknown flag, a value that is not a number) says what is wrong but not what to do:
     * followed by the flags it may have been a typo of, and where the flags are listed.
     */
    static String usageError(CommandLine.ParameterException e) {
        String hint = "--help lists the flags";
        if (e instanceof CommandLine.UnmatchedArgumentException unmatched
                && !unmatched.getUnmatched().isEmpty()) {
            List<String> meant = FlagTypos.nearest(
                    unmatched.getUnmatched().getFirst(),
                    e.getCommandLine().getCommandSpec().optionsMap().keySet());
            if (!meant.isEmpty()) {
                hint = "did you mean " + String.join(" or ", meant) + "? " + hint;
            }
        }
        return oneLine(e.getMessage()) + " (" + hint + ")";
    }

    private static String oneLine(String message) {
        String m = message == null ? "invalid arguments" : message.strip();
        int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl);
    }

    /** The names of the --workers are checked as /register checks them (registry.Registration#nameProblem). */
    private static void checkName(String flag, String name) throws ConfigException {
        String problem = Registration.nameProblem(name);
        if (problem != null) {
            throw new ConfigException("invalid value for " + flag + ": " + problem);
        }
    }
}

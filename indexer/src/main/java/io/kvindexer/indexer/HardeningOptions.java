package io.kvindexer.indexer;

import io.kvindexer.indexer.common.BearerTokens;
import io.kvindexer.indexer.common.ServiceLimits;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import picocli.CommandLine.Option;

/** The limit and authentication flags, mixed into {@link IndexerCli}. */
public final class HardeningOptions {

    /** Environment variable holding the bearer token when no {@code --auth-token-file} is given. */
    public static final String TOKEN_ENV = "KV_INDEXER_AUTH_TOKEN";

    @Option(
            names = "--max-query-tokens",
            paramLabel = "N",
            description = "token ids (or block hashes) in one query (default: ${DEFAULT-VALUE})")
    int maxQueryTokens = ServiceLimits.DEFAULTS.maxQueryTokens();

    @Option(
            names = "--max-ranks-per-instance",
            paramLabel = "N",
            description = "dp ranks one instance may register (default: ${DEFAULT-VALUE})")
    int maxRanksPerInstance = ServiceLimits.DEFAULTS.maxRanksPerInstance();

    @Option(
            names = "--max-listeners",
            paramLabel = "N",
            description = "registered (instance, dp rank) listeners in total (default: ${DEFAULT-VALUE})")
    int maxListeners = ServiceLimits.DEFAULTS.maxListeners();

    @Option(names = "--max-peers", paramLabel = "N", description = "peer URLs kept (default: ${DEFAULT-VALUE})")
    int maxPeers = ServiceLimits.DEFAULTS.maxPeers();

    @Option(
            names = "--request-read-timeout-ms",
            paramLabel = "MS",
            description = "time to receive a request's request line and headers once the line's first bytes are in,"
                    + " then its body once its headers are in; a client that stalls longer gets 408 and the"
                    + " connection is closed; over TLS, also the time from a connection's start to its first"
                    + " request's bytes (its handshake), then it is closed (default: ${DEFAULT-VALUE}; at most"
                    + " 3600000, an hour)")
    String requestReadTimeoutMs = String.valueOf(ServiceLimits.DEFAULT_REQUEST_READ_TIMEOUT.toMillis());

    @Option(
            names = "--max-concurrent-replays",
            paramLabel = "N",
            description = "engine replays (gap recovery) running at once; the rest wait (default: ${DEFAULT-VALUE})")
    int maxConcurrentReplays = ServiceLimits.DEFAULT_MAX_CONCURRENT_REPLAYS;

    @Option(
            names = "--max-concurrent-dumps",
            paramLabel = "N",
            description = "/dump answers streaming at once; one more gets 503 with Retry-After (default:"
                    + " ${DEFAULT-VALUE})")
    int maxConcurrentDumps = ServiceLimits.DEFAULT_MAX_CONCURRENT_DUMPS;

    @Option(
            names = "--dump-stall-timeout-ms",
            paramLabel = "MS",
            description = "a /dump whose client accepts no bytes this long is abandoned and its connection closed"
                    + " (default: ${DEFAULT-VALUE}; at most 3600000, an hour)")
    String dumpStallTimeoutMs = String.valueOf(ServiceLimits.DEFAULT_DUMP_STALL_TIMEOUT.toMillis());

    @Option(
            names = "--auth-token-file",
            paramLabel = "FILE",
            description = "require `Authorization: Bearer <token>` (token = the file's one line, trimmed) on /register,"
                    + " /unregister, /register_peer, /deregister_peer, /dump, /prefixes and /reopen_logs (and /test/*); also"
                    + " sent to peers. Default: env "
                    + TOKEN_ENV + ", else no authentication")
    Path authTokenFile;

    ServiceLimits limits() throws ConfigException {
        atLeastOne("--max-query-tokens", maxQueryTokens);
        atLeastOne("--max-ranks-per-instance", maxRanksPerInstance);
        atLeastOne("--max-listeners", maxListeners);
        atLeastOne("--max-peers", maxPeers);
        atLeastOne("--max-concurrent-replays", maxConcurrentReplays);
        atLeastOne("--max-concurrent-dumps", maxConcurrentDumps);
        return new ServiceLimits(
                maxQueryTokens,
                maxRanksPerInstance,
                maxListeners,
                maxPeers,
                millisUpToAnHour("--request-read-timeout-ms", requestReadTimeoutMs),
                maxConcurrentReplays,
                maxConcurrentDumps,
                millisUpToAnHour("--dump-stall-timeout-ms", dumpStallTimeoutMs));
    }

    /**
     * A whole number of milliseconds, 1 up to {@link ServiceLimits#MAX_CLIENT_TIMEOUT}; read as any number of
     * digits, so that one beyond a long is "too large" as well, not a parse error of another kind.
     */
    private static Duration millisUpToAnHour(String flag, String value) throws ConfigException {
        String text = value.strip();
        if (!text.matches("[+-]?[0-9]+")) {
            throw new ConfigException("invalid value for " + flag + ": '" + value + "' is not a whole number of ms");
        }
        BigInteger ms = new BigInteger(text);
        if (ms.signum() < 1) {
            throw new ConfigException("invalid value for " + flag + ": " + ms + " (expected at least 1)");
        }
        long max = ServiceLimits.MAX_CLIENT_TIMEOUT.toMillis();
        if (ms.compareTo(BigInteger.valueOf(max)) > 0) {
            throw new ConfigException(
                    "invalid value for " + flag + ": " + ms + " is too large: at most " + max + " (an hour)");
        }
        return Duration.ofMillis(ms.longValueExact());
    }

    /** A limit flag below 1 is refused by its name (ServiceLimits checks the same, without the flags' names). */
    private static void atLeastOne(String flag, long value) throws ConfigException {
        if (value < 1) {
            throw new ConfigException("invalid value for " + flag + ": " + value + " (expected at least 1)");
        }
    }

    /** The token from the file, else from the environment; null when neither is set. */
    String authToken(Map<String, String> env) throws ConfigException {
        if (authTokenFile != null) {
            try {
                return BearerTokens.read(authTokenFile);
            } catch (IOException e) {
                throw new ConfigException("invalid value for --auth-token-file: " + e.getMessage());
            }
        }
        String token = env.get(TOKEN_ENV);
        if (token == null || token.isBlank()) {
            return null; // unlike an empty file, an empty variable means no authentication (an optional Secret)
        }
        String problem = BearerTokens.problem(token);
        if (problem != null) {
            throw new ConfigException(TOKEN_ENV + " " + problem);
        }
        return token.strip();
    }
}

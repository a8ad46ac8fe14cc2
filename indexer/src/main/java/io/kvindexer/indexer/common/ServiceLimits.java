package io.kvindexer.indexer.common;

import java.time.Duration;
import java.util.function.Consumer;

/**
 * Limits a hostile or buggy client cannot exceed (request body sizes are in {@code IndexerConfig}). Each has a flag
 * (see {@code HardeningOptions}); the defaults stay above anything a real deployment sends.
 *
 * @param maxQueryTokens         token ids in one {@code /query} (and block hashes in one {@code /query_by_hash})
 * @param maxRanksPerInstance    dp ranks (listeners) one instance may register
 * @param maxListeners           listeners (registered (instance, dp rank) pairs) in total
 * @param maxPeers               peer URLs kept by {@code /register_peer} and {@code --peers}; also the most peers one
 *                               startup recovery tries ({@code --peers} then {@code --peers-dns})
 * @param requestReadTimeout     time to receive a request's line and headers once the line's first bytes are in,
 *                               then its whole body once its headers are in; then 408. Over TLS also from a
 *                               connection's start to its first request's bytes (the handshake); then it is closed
 * @param maxConcurrentReplays   engine replays running at once in the process (the rest wait their turn)
 * @param maxConcurrentDumps     {@code /dump} answers streaming at once; one more is refused (503, Retry-After)
 * @param dumpStallTimeout       time a {@code /dump} client may accept no bytes before the dump is abandoned
 */
public record ServiceLimits(
        int maxQueryTokens,
        int maxRanksPerInstance,
        int maxListeners,
        int maxPeers,
        Duration requestReadTimeout,
        int maxConcurrentReplays,
        int maxConcurrentDumps,
        Duration dumpStallTimeout) {

    /** 8: a restart's catch-up replays do not starve the live streams. */
    public static final int DEFAULT_MAX_CONCURRENT_REPLAYS = 8;

    /** 4: peers recovering at once and a snapshot; each dump may keep 16 MB waiting for its client. */
    public static final int DEFAULT_MAX_CONCURRENT_DUMPS = 4;

    /** 60 s: a recovering peer reads as it applies; one that reads nothing for a minute is gone or stuck. */
    public static final Duration DEFAULT_DUMP_STALL_TIMEOUT = Duration.ofSeconds(60);

    /** 30 s: far above any real body on a cluster network, short enough that stalled clients do not pile up. */
    public static final Duration DEFAULT_REQUEST_READ_TIMEOUT = Duration.ofSeconds(30);

    /**
     * 1 h, the most {@code --request-read-timeout-ms} and {@code --dump-stall-timeout-ms} take: a client still
     * sending, or not reading, after an hour is stalled on any link, and a bound keeps a typo of a few digits from
     * disabling the timeout (or overflowing it).
     */
    public static final Duration MAX_CLIENT_TIMEOUT = Duration.ofHours(1);

    /** 4 Mi tokens is what fits in Dynamo's 8 MiB /query body; 256 ranks, 4096 listeners, 64 peers. */
    public static final ServiceLimits DEFAULTS = new ServiceLimits(
            4 * 1024 * 1024,
            256,
            4096,
            64,
            DEFAULT_REQUEST_READ_TIMEOUT,
            DEFAULT_MAX_CONCURRENT_REPLAYS,
            DEFAULT_MAX_CONCURRENT_DUMPS,
            DEFAULT_DUMP_STALL_TIMEOUT);

    public ServiceLimits {
        if (maxQueryTokens < 1 || maxRanksPerInstance < 1 || maxListeners < 1 || maxPeers < 1) {
            throw new IllegalArgumentException("every limit must be >= 1");
        }
        if (requestReadTimeout == null || requestReadTimeout.toMillis() < 1) {
            throw new IllegalArgumentException("the request read timeout must be >= 1 ms");
        }
        if (maxConcurrentReplays < 1 || maxConcurrentDumps < 1) {
            throw new IllegalArgumentException("every limit must be >= 1");
        }
        if (dumpStallTimeout == null || dumpStallTimeout.toMillis() < 1) {
            throw new IllegalArgumentException("the dump stall timeout must be >= 1 ms");
        }
    }

    /**
     * These limits with what {@code change} sets on a mutable copy, e.g. {@code DEFAULTS.with(l -> l.maxPeers = 2)}:
     * the one way to derive limits, so a new limit needs no constructor or wither of its own.
     */
    public ServiceLimits with(Consumer<Draft> change) {
        Draft d = new Draft(this);
        change.accept(d);
        return new ServiceLimits(
                d.maxQueryTokens,
                d.maxRanksPerInstance,
                d.maxListeners,
                d.maxPeers,
                d.requestReadTimeout,
                d.maxConcurrentReplays,
                d.maxConcurrentDumps,
                d.dumpStallTimeout);
    }

    /** A mutable copy of every component, which {@link #with} hands out to change and then builds. */
    public static final class Draft {
        public int maxQueryTokens;
        public int maxRanksPerInstance;
        public int maxListeners;
        public int maxPeers;
        public Duration requestReadTimeout;
        public int maxConcurrentReplays;
        public int maxConcurrentDumps;
        public Duration dumpStallTimeout;

        private Draft(ServiceLimits l) {
            maxQueryTokens = l.maxQueryTokens;
            maxRanksPerInstance = l.maxRanksPerInstance;
            maxListeners = l.maxListeners;
            maxPeers = l.maxPeers;
            requestReadTimeout = l.requestReadTimeout;
            maxConcurrentReplays = l.maxConcurrentReplays;
            maxConcurrentDumps = l.maxConcurrentDumps;
            dumpStallTimeout = l.dumpStallTimeout;
        }
    }
}

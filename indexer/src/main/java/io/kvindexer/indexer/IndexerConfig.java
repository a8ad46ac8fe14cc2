package io.kvindexer.indexer;

import io.kvindexer.indexer.common.BearerTokens;
import io.kvindexer.indexer.common.ServiceLimits;
import io.kvindexer.indexer.common.Tenants;
import io.kvindexer.indexer.common.TransportSecurity;
import io.kvindexer.indexer.expiry.ExpiryPolicy;
import io.kvindexer.indexer.http.AccessLogSettings;
import io.kvindexer.indexer.http.HttpSettings;
import io.kvindexer.indexer.http.TracingSettings;
import io.kvindexer.indexer.index.IndexOptions;
import io.kvindexer.indexer.ingest.IngestSettings;
import io.kvindexer.indexer.recovery.PeerCalls;
import io.kvindexer.indexer.recovery.PeerDiscovery;
import io.kvindexer.indexer.registry.WorkerEntry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

/**
 * Everything the service is started with: flags (see {@link IndexerCli}) and environment, already validated.
 *
 * @param host              HTTP bind address
 * @param port              HTTP port (0 = pick a free one)
 * @param threads           index writer threads
 * @param indexShards       shards per index, at most {@code threads} (see {@link IndexOptions#shards})
 * @param blockSize         block size for {@code --workers}; null when not given
 * @param workers           initial registrations under (modelName, tenantId)
 * @param peers             peer base URLs for startup recovery, in order
 * @param peersDns          a name whose addresses are the peers (tried after {@code peers}); null = none
 * @param peerCalls         the schemes of those addresses and the token sent to peers, when not this replica's own
 * @param demo              start embedded engine simulators and register them
 * @param mixCacheSalt      mix a query's cache_salt into its hashes (G3 behaviour; off = G2)
 * @param maxQueryBodyBytes body limit of /query, /query_by_hash and /query_tiered_by_hash (Dynamo: 8 MiB)
 * @param maxBodyBytes      body limit of every other POST (Dynamo: axum's 2 MB default)
 * @param minInitialWorkers DYN_ROUTER_MIN_INITIAL_WORKERS (0 = no wait)
 * @param testEndpoints     DYN_KV_INDEXER_TEST_ENDPOINTS: mount /test/pause_listener and /test/resume_listener
 * @param recoveryDelay     wait before fetching a peer's dump (lets SUB subscriptions reach the publishers)
 * @param peerTimeout       timeout of one peer's /dump request
 * @param limits            caps on query size, registrations and peers (see {@link ServiceLimits})
 * @param authToken         bearer token required on mutating endpoints and /dump, sent to peers; null = open
 * @param snapshotDir       where local snapshots are written and loaded from; null = none
 * @param snapshotInterval  time between two snapshots
 * @param unregisterGrace   how long an unregistered worker's blocks are kept detached (zero: dropped at once)
 * @param expiry            {@code --block-ttl} and {@code --max-blocks-per-worker} ({@link ExpiryPolicy#NONE}: neither)
 * @param security          TLS files and the rotating token file (see {@link TransportSecurity})
 * @param ingest            the receive queue's byte bound and the degraded hold (see {@link IngestSettings})
 * @param accessLog         {@code --access-log} and its options ({@link AccessLogSettings#NONE}: none)
 * @param tracing           request spans and their export, from the environment ({@link TracingSettings#OFF}: none)
 */
public record IndexerConfig(
        String host,
        int port,
        int threads,
        int indexShards,
        Integer blockSize,
        List<WorkerEntry> workers,
        String modelName,
        String tenantId,
        List<String> peers,
        PeerDiscovery.Target peersDns,
        PeerCalls peerCalls,
        boolean demo,
        boolean mixCacheSalt,
        long maxQueryBodyBytes,
        long maxBodyBytes,
        int minInitialWorkers,
        boolean testEndpoints,
        Duration recoveryDelay,
        Duration peerTimeout,
        ServiceLimits limits,
        String authToken,
        Path snapshotDir,
        Duration snapshotInterval,
        Duration unregisterGrace,
        ExpiryPolicy expiry,
        TransportSecurity security,
        IngestSettings ingest,
        AccessLogSettings accessLog,
        TracingSettings tracing)
        implements HttpSettings {

    public static final int DEFAULT_PORT = 8090;
    public static final long DEFAULT_MAX_QUERY_BODY = 8L * 1024 * 1024;
    public static final long DEFAULT_MAX_BODY = 2L * 1024 * 1024;
    /** The model of {@code --workers} when {@code --model-name} is not given. */
    public static final String DEFAULT_MODEL = "default";

    public static final Duration DEFAULT_SNAPSHOT_INTERVAL = Duration.ofSeconds(30);
    /** the wait before a starting replica asks a peer for its dump (its SUB sockets reach the publishers meanwhile) */
    public static final Duration DEFAULT_RECOVERY_DELAY = Duration.ofSeconds(1);

    public IndexerConfig {
        workers = List.copyOf(workers);
        peers = List.copyOf(peers);
        peerCalls = peerCalls != null ? peerCalls : PeerCalls.OWN;
        limits = limits != null ? limits : ServiceLimits.DEFAULTS;
        snapshotInterval = snapshotInterval != null ? snapshotInterval : DEFAULT_SNAPSHOT_INTERVAL;
        unregisterGrace = unregisterGrace != null ? unregisterGrace : Duration.ZERO;
        expiry = expiry != null ? expiry : ExpiryPolicy.NONE;
        security = security != null ? security : TransportSecurity.NONE;
        ingest = ingest != null ? ingest : IngestSettings.defaults();
        accessLog = accessLog != null ? accessLog : AccessLogSettings.NONE;
        tracing = tracing != null ? tracing : TracingSettings.OFF;
    }

    /** Defaults for tests: loopback, a free port, no workers, no peers. */
    public static IndexerConfig defaults() {
        return new IndexerConfig(
                "127.0.0.1",
                0,
                IndexOptions.DEFAULT_WRITER_THREADS,
                IndexOptions.DEFAULT_SHARDS,
                null,
                List.of(),
                DEFAULT_MODEL,
                Tenants.DEFAULT,
                List.of(),
                null,
                PeerCalls.OWN,
                false,
                false,
                DEFAULT_MAX_QUERY_BODY,
                DEFAULT_MAX_BODY,
                0,
                false,
                DEFAULT_RECOVERY_DELAY,
                Duration.ofSeconds(10),
                ServiceLimits.DEFAULTS,
                null,
                null,
                DEFAULT_SNAPSHOT_INTERVAL,
                Duration.ZERO,
                ExpiryPolicy.NONE,
                TransportSecurity.NONE,
                IngestSettings.defaults(),
                AccessLogSettings.NONE,
                TracingSettings.OFF);
    }

    /** The index options these flags give. */
    public IndexOptions indexOptions() {
        return new IndexOptions(mixCacheSalt, threads, indexShards); // ModelIndex caps shards at the writer threads
    }

    /** True when startup recovers from peers ({@code --peers} or {@code --peers-dns}). */
    public boolean recoversFromPeers() {
        return !peers.isEmpty() || peersDns != null;
    }

    /** True when startup recovers state (from peers, or from a snapshot when no peer answers). */
    public boolean recoversAtStart() {
        return recoversFromPeers() || snapshotDir != null;
    }

    /** The tokens {@code BearerAuth} accepts: the token file's (rotating), else the fixed token; null = open. */
    @Override
    public BearerTokens bearerTokens() {
        if (security.tokens() != null) {
            return security.tokens();
        }
        return authToken == null ? null : BearerTokens.fixed(authToken);
    }

    /** {@code https} when the HTTP port serves TLS, else {@code http}. */
    public String scheme() {
        return security.serverTls() ? "https" : "http";
    }

    /**
     * This config with what {@code change} sets on a mutable copy, e.g. {@code with(c -> c.authToken = "t")}: the
     * one way to derive a config, so a new component needs no wither of its own.
     */
    public IndexerConfig with(Consumer<Draft> change) {
        Draft d = new Draft(this);
        change.accept(d);
        return d.build();
    }

    /** A mutable copy of every component, which {@link #with} hands out to change and then builds. */
    public static final class Draft {
        public String host;
        public int port;
        public int threads;
        public int indexShards;
        public Integer blockSize;
        public List<WorkerEntry> workers;
        public String modelName;
        public String tenantId;
        public List<String> peers;
        public PeerDiscovery.Target peersDns;
        public PeerCalls peerCalls;
        public boolean demo;
        public boolean mixCacheSalt;
        public long maxQueryBodyBytes;
        public long maxBodyBytes;
        public int minInitialWorkers;
        public boolean testEndpoints;
        public Duration recoveryDelay;
        public Duration peerTimeout;
        public ServiceLimits limits;
        public String authToken;
        public Path snapshotDir;
        public Duration snapshotInterval;
        public Duration unregisterGrace;
        public ExpiryPolicy expiry;
        public TransportSecurity security;
        public IngestSettings ingest;
        public AccessLogSettings accessLog;
        public TracingSettings tracing;

        private Draft(IndexerConfig c) {
            host = c.host;
            port = c.port;
            threads = c.threads;
            indexShards = c.indexShards;
            blockSize = c.blockSize;
            workers = c.workers;
            modelName = c.modelName;
            tenantId = c.tenantId;
            peers = c.peers;
            peersDns = c.peersDns;
            peerCalls = c.peerCalls;
            demo = c.demo;
            mixCacheSalt = c.mixCacheSalt;
            maxQueryBodyBytes = c.maxQueryBodyBytes;
            maxBodyBytes = c.maxBodyBytes;
            minInitialWorkers = c.minInitialWorkers;
            testEndpoints = c.testEndpoints;
            recoveryDelay = c.recoveryDelay;
            peerTimeout = c.peerTimeout;
            limits = c.limits;
            authToken = c.authToken;
            snapshotDir = c.snapshotDir;
            snapshotInterval = c.snapshotInterval;
            unregisterGrace = c.unregisterGrace;
            expiry = c.expiry;
            security = c.security;
            ingest = c.ingest;
            accessLog = c.accessLog;
            tracing = c.tracing;
        }

        private IndexerConfig build() {
            return new IndexerConfig(
                    host,
                    port,
                    threads,
                    indexShards,
                    blockSize,
                    workers,
                    modelName,
                    tenantId,
                    peers,
                    peersDns,
                    peerCalls,
                    demo,
                    mixCacheSalt,
                    maxQueryBodyBytes,
                    maxBodyBytes,
                    minInitialWorkers,
                    testEndpoints,
                    recoveryDelay,
                    peerTimeout,
                    limits,
                    authToken,
                    snapshotDir,
                    snapshotInterval,
                    unregisterGrace,
                    expiry,
                    security,
                    ingest,
                    accessLog,
                    tracing);
        }
    }
}

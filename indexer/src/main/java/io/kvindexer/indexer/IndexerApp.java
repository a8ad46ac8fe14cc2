package io.kvindexer.indexer;

import io.helidon.common.tls.Tls;
import io.helidon.webserver.WebServer;
import io.kvindexer.indexer.http.AccessLogSettings;
import io.kvindexer.indexer.http.IndexerRouting;
import io.kvindexer.indexer.http.ServerTls;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.metrics.IndexerMetrics;
import io.kvindexer.indexer.recovery.PeerDiscovery;
import io.kvindexer.indexer.recovery.PeerRecovery;
import io.kvindexer.indexer.recovery.Recovered;
import io.kvindexer.indexer.recovery.SnapshotRecovery;
import io.kvindexer.indexer.recovery.StartupGate;
import io.kvindexer.indexer.registry.RegistryException;
import io.kvindexer.indexer.registry.WorkerRegistry;
import io.kvindexer.indexer.snapshot.SnapshotFiles;
import io.kvindexer.indexer.snapshot.Snapshotter;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigurationException;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A running indexer: the {@link IndexerCore} (index, registry, listeners, startup gate) behind an HTTP server, and
 * startup recovery from peers. Startup follows docs/compatibility.md, "Startup, recovery and readiness", with one
 * difference on purpose (docs/compatibility.md, "Where we differ on purpose"): HTTP opens first, so {@code /health}
 * answers at once while {@code /ready} says when recovery and the startup gate are done. Used by
 * {@link IndexerMain} and by end-to-end tests.
 */
public final class IndexerApp implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(IndexerApp.class.getName());

    private final IndexerConfig config;
    private final IndexerCore core;
    private final IndexerRouting.Components components;
    private final WebServer server;
    private final Snapshotter snapshots;
    private final Thread startup;
    private final Demo demo;
    private final SecurityReloads reloads;
    /** An {@link Error} that ended startup recovery: {@link IndexerMain} exits on it */
    private final CompletableFuture<Error> startupError = new CompletableFuture<>();

    private IndexerApp(IndexerConfig config) throws RegistryException, ConfigException {
        this.config = config;
        ListenCheck.require(config.host(), config.port(), config.demo());
        warnIdleAccessLogFlags(config.accessLog());
        this.core = IndexerCore.start(config);
        this.components = core.components();
        Snapshotter snapshotter = null;
        Tls servedTls = null;
        if (config.snapshotDir() != null) {
            components.metrics().snapshotsEnabled(config.snapshotDir(), config.snapshotInterval());
        }
        try {
            // takes the directory first: a second replica pointed at it stops here, before it listens
            snapshotter = config.snapshotDir() == null
                    ? null
                    : new Snapshotter(
                            config.snapshotDir(),
                            config.snapshotInterval(),
                            components.workers(),
                            components.indexers(),
                            components.metrics()::snapshot,
                            components.metrics()::newestSnapshot);
            var builder = WebServer.builder();
            if (config.security().serverTls()) {
                servedTls = ServerTls.load(
                        config.security().certFile(), config.security().keyFile());
                builder.tls(servedTls);
            }
            this.server = builder.host(config.host())
                    .port(config.port())
                    .update(b -> IndexerRouting.serverAnswers(b, config))
                    .update(b -> IndexerRouting.headerDeadline(b, config))
                    .connectionOptions(IndexerRouting.connectionOptions(
                            config, config.security().serverTls()))
                    .shutdownHook(false)
                    .routing(r -> IndexerRouting.routing(r, components))
                    .build()
                    .start();
            if (!server.isRunning()) { // Helidon logs a bind failure and returns a stopped server
                throw new IllegalStateException("cannot listen on " + config.host() + ":" + config.port());
            }
        } catch (RuntimeException e) {
            if (snapshotter != null) {
                snapshotter.close(); // never started: lets the directory go without writing
            }
            core.close(); // a failed start leaves no listener or writer thread behind
            throw e;
        }
        this.snapshots = snapshotter;
        this.reloads = new SecurityReloads(config.security(), server, servedTls);
        LOG.log(
                System.Logger.Level.INFO,
                "kv-indexer {0} on {1}:{2,number,#}",
                config.scheme().toUpperCase(java.util.Locale.ROOT),
                config.host(),
                server.port());
        this.startup = Thread.ofVirtual().name("indexer-startup").start(this::recoverThenOpen);
        Demo started = null;
        if (config.demo()) {
            try {
                started = startDemo();
            } catch (RuntimeException e) {
                close(); // a failed start leaves no server, listener or writer behind
                throw e;
            }
        }
        this.demo = started;
    }

    /**
     * {@code --demo}'s engines, registered once startup recovery is over: a registration restored from a snapshot
     * or a peer names a previous run's engines, which are gone, so this run's replace it (registering during the
     * recovery raced its restore, and the loser failed the start). One of {@code --workers} is not replaced.
     */
    private Demo startDemo() {
        try {
            startup.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        WorkerRegistry workers = components.workers();
        return Demo.start(r -> {
            try {
                workers.register(r);
            } catch (RegistryException e) {
                boolean flagged = config.workers().stream().anyMatch(w -> w.instanceId() == r.instanceId());
                if (e.kind() != RegistryException.Kind.CONFLICT || flagged) {
                    throw e; // --workers' registrations are the user's own: never replaced
                }
                workers.unregister(r.instanceId(), r.modelName(), r.tenantId(), r.dpRank());
                workers.register(r);
            }
        });
    }

    /**
     * Dynamo's {@code --access-log-local-time} and {@code --trace-id-header} shape the access log only: without
     * {@code --access-log} they do nothing. Dynamo takes them silently, so they stay accepted; a warning says so.
     */
    private static void warnIdleAccessLogFlags(AccessLogSettings accessLog) {
        if (accessLog.enabled()) {
            return;
        }
        List<String> idle = new ArrayList<>();
        if (accessLog.localTime()) {
            idle.add("--access-log-local-time");
        }
        if (!accessLog.traceIdHeader().equals(AccessLogSettings.DEFAULT_TRACE_ID_HEADER)) {
            idle.add("--trace-id-header");
        }
        if (!idle.isEmpty()) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "{0} given without --access-log: no access log is written, so {1} nothing",
                    String.join(" and ", idle),
                    idle.size() == 1 ? "it changes" : "they change");
        }
    }

    /** Starts from command-line flags and the process environment; returns once HTTP is listening. */
    public static IndexerApp start(String... args) throws ConfigException {
        IndexerCli.Parsed parsed = IndexerCli.parse(args, System.getenv());
        if (parsed.config() == null) {
            throw new ConfigException(
                    "nothing to start: " + parsed.helpText().lines().findFirst().orElse(""));
        }
        return start(parsed.config());
    }

    /** Starts from a config (tests pass environment values through it). */
    public static IndexerApp start(IndexerConfig config) throws ConfigException {
        try {
            return new IndexerApp(config);
        } catch (RegistryException e) {
            throw new ConfigException("invalid value for --workers: " + e.getMessage());
        } catch (ConfigurationException e) { // the OpenTelemetry SDK's reading of the OTEL_* variables
            throw new ConfigException("invalid OpenTelemetry setting (OTEL_*): " + e.getMessage());
        }
    }

    /**
     * Recovers from {@code --peers}, then from what {@code --peers-dns} resolves to; only the former are kept in
     * {@code /peers} (the operator keeps that list in step with the replicas, a resolved address would go stale).
     */
    private void recoverThenOpen() {
        long started = System.nanoTime();
        try {
            for (String p : config.peers()) {
                components.peers().add(p);
            }
            if (!config.recoversAtStart()) {
                metrics().startupRecovery(Start.NONE, 0);
                return;
            }
            Start start = recover();
            Recovered recovered = start.recovered();
            int restored = components
                    .workers()
                    .finishRecovery(
                            recovered == null ? List.of() : recovered.registrations(),
                            recovered == null ? Set.of() : recovered.fromSnapshot(),
                            recovered == null ? List.of() : recovered.detached(),
                            recovered == null ? () -> {} : recovered.install());
            components.indexers().flushAll().get(config.peerTimeout().toMillis(), TimeUnit.MILLISECONDS);
            if (recovered != null) {
                LOG.log(
                        System.Logger.Level.INFO,
                        "recovered {0} indexes and {1} registrations from {2}",
                        recovered.indexes(),
                        restored,
                        recovered.source());
            }
            components.gate().recoveryFinished(recovered != null && recovered.bringsState());
            metrics().startupRecovery(start.source(), (System.nanoTime() - started) / 1e9);
            if (snapshots != null) {
                snapshots.start(); // only now: an empty replica must not push out the good snapshots
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return; // closing: close() writes the last snapshot if the writer runs
        } catch (Error e) {
            // not a recovery that failed but a process that is broken (a class that does not load, a stack
            // overflow, an OutOfMemoryError without -XX:+ExitOnOutOfMemoryError): nothing it did since can be
            // trusted, and it would stay unready for good, so it stops for its supervisor to start it again
            LOG.log(
                    System.Logger.Level.ERROR,
                    "startup recovery failed with " + e
                            + "; the replica cannot start, so the process exits (status 1) to be restarted",
                    e);
            startupError.complete(e);
        } catch (RuntimeException | ExecutionException | TimeoutException e) {
            // never leave the gate shut for good: start with what is there, as with no peer
            LOG.log(
                    System.Logger.Level.ERROR,
                    "startup recovery failed; starting with what is installed"
                            + (snapshots == null
                                    ? ""
                                    : "; no snapshot is written, so those on disk stay for the next start"
                                            + " (restart the replica once the cause is fixed)"),
                    e);
            components.workers().finishRecovery(List.of(), () -> {});
            components.gate().recoveryFinished();
            metrics().startupRecovery(Start.NONE, (System.nanoTime() - started) / 1e9);
            // the writer stays off: what it wrote from a half-recovered index would prune the good snapshots
            // (snapshot_last_success_timestamp_seconds goes stale and KvIndexerSnapshotsOverdue fires)
        }
    }

    /**
     * What startup recovery brought and where from: {@code source} is the label of {@code
     * dynamo_kvindexer_startup_recovery_seconds}.
     */
    private record Start(Recovered recovered, String source) {
        static final String NONE = "none";
    }

    /**
     * A live peer wins; without one, the newest good snapshot; nothing when neither gives anything. A blank peer (it
     * has seen nothing from before its own start) does not win over the snapshot: only its registrations are added.
     */
    private Start recover() throws InterruptedException {
        Recovered recovered = null;
        boolean ownSnapshot = hasSnapshot();
        if (ownSnapshot) {
            components.gate().snapshotToFallBackOn();
        }
        if (config.recoversFromPeers()) {
            try {
                recovered = new PeerRecovery(
                                peerCandidates(),
                                components.indexers(),
                                config.recoveryDelay(),
                                config.peerTimeout(),
                                config.peerCalls()
                                        .token(
                                                config.bearerTokens() == null
                                                        ? null
                                                        : config.bearerTokens().current()))
                        .trusting(config.security().caFile())
                        .withOwnSnapshot(ownSnapshot)
                        .fetch();
            } catch (RuntimeException e) {
                // (a --tls-ca-file gone since the start, say) as if no peer answered: the snapshot is still there
                LOG.log(
                        System.Logger.Level.ERROR,
                        "P2P recovery failed ({0}); starting from the snapshot, if any, as with no reachable peer",
                        e.toString());
            }
        }
        if ((recovered == null || recovered.blank()) && config.snapshotDir() != null) {
            Recovered snapshot = SnapshotRecovery.load(
                    config.snapshotDir(),
                    components.indexers(),
                    config.peerTimeout(),
                    metrics()::snapshot,
                    snapshots == null ? file -> {} : snapshots::loaded);
            if (snapshot != null) {
                return new Start(recovered == null ? snapshot : snapshot.with(recovered), "snapshot");
            }
        }
        return new Start(recovered, recovered == null ? Start.NONE : recovered.blank() ? "blank_peer" : "peer");
    }

    /**
     * {@code --peers}, then each address {@code --peers-dns} resolves to, in the schemes of {@code
     * --peers-dns-schemes} (by default the one this replica serves: the replicas share it); at most {@code
     * --max-peers} peers, a peer asked in two schemes counted once.
     */
    private List<String> peerCandidates() {
        int max = config.limits().maxPeers();
        Set<String> candidates =
                new LinkedHashSet<>(config.peers().stream().limit(max).toList());
        if (config.peersDns() != null) {
            int peers = candidates.size();
            List<String> schemes = config.peerCalls().dnsSchemes(config.scheme());
            for (String url : PeerDiscovery.resolve(config.peersDns(), config.host(), port())) {
                if (peers >= max) {
                    break;
                }
                if (candidates.addAll(PeerDiscovery.inSchemes(url, schemes))) {
                    peers++;
                }
            }
        }
        return List.copyOf(candidates);
    }

    /** Whether {@code --snapshot-dir} holds a snapshot to start from (checked when it is loaded). */
    private boolean hasSnapshot() {
        if (config.snapshotDir() == null) {
            return false;
        }
        try {
            return !new SnapshotFiles(config.snapshotDir()).newestFirst().isEmpty();
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * Completes with the {@link Error} that ended startup recovery, if one does (logged already): the replica then
     * never becomes ready, and the process should exit ({@link IndexerMain} does, with status 1).
     */
    public CompletableFuture<Error> startupError() {
        return startupError;
    }

    public int port() {
        return server.port();
    }

    public String baseUrl() {
        String host = config.host();
        if (host.equals("0.0.0.0")) {
            host = "127.0.0.1";
        } else if (host.equals("::")) {
            host = "[::1]";
        } else if (host.contains(":")) {
            host = "[" + host + "]";
        }
        return config.scheme() + "://" + host + ":" + port();
    }

    public IndexerConfig config() {
        return config;
    }

    public IndexerMetrics metrics() {
        return components.metrics();
    }

    public WorkerRegistry workers() {
        return components.workers();
    }

    public Indexers indexers() {
        return components.indexers();
    }

    /** The snapshot writer; null without {@code --snapshot-dir}. */
    public Snapshotter snapshots() {
        return snapshots;
    }

    public StartupGate gate() {
        return components.gate();
    }

    /** The demo's curl lines; null when not in demo mode. Over HTTPS they trust {@code --tls-ca-file}, if given. */
    public String demoCurls() {
        return demo == null
                ? null
                : demo.curls(
                        baseUrl(),
                        config.security().serverTls() ? config.security().caFile() : null);
    }

    /** The demo itself (demo mode only; tests drive its traffic). */
    Demo demo() {
        return demo;
    }

    /** The demo's example query (demo mode only; tests use it). */
    public int[] demoQuery() {
        return demo == null ? null : demo.exampleQuery();
    }

    /**
     * The first step of a stop with {@code --shutdown-delay}: {@code /ready} answers 503 ({@code shutting_down}) while
     * everything else goes on for {@code delay}, the time a Kubernetes Service, a load balancer or a router needs to
     * stop sending here; then {@link #close} stops. Returns early, without error, when interrupted.
     */
    public void drain(Duration delay) {
        if (delay.isZero() || delay.isNegative()) {
            return;
        }
        components.gate().shuttingDown();
        LOG.log(
                System.Logger.Level.INFO,
                "stopping in {0} ms (--shutdown-delay): /ready answers 503, queries are still answered",
                delay.toMillis());
        try {
            Thread.sleep(delay);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Stops in dependency order: HTTP, then the listeners and the index writers, then the demo's engines (after the
     * listeners, which would otherwise log each engine's connection lost on the way out).
     */
    @Override
    public void close() {
        startup.interrupt();
        reloads.close();
        server.stop();
        if (snapshots != null) {
            snapshots.close(); // one last snapshot while the listeners still run
        }
        core.close();
        if (demo != null) {
            demo.close();
        }
    }
}

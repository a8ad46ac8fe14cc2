package io.kvindexer.operator;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.config.ConfigurationServiceOverrider;
import io.javaoperatorsdk.operator.api.config.ControllerConfigurationOverrider;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.kvindexer.operator.client.IndexerClient;
import io.kvindexer.operator.indexer.KvIndexerReconciler;
import io.kvindexer.operator.observability.EventRecorder;
import io.kvindexer.operator.observability.OperatorMetrics;
import io.kvindexer.operator.reconcile.ControllerServices;
import io.kvindexer.operator.reconcile.Retention;
import io.kvindexer.operator.worker.KvWorkerReconciler;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * The one place that configures the Java Operator SDK, used by {@link OperatorMain} and by the tests alike.
 *
 * <p>Server-side apply is switched off for primary (status, finalizer) patches and for dependent matching: the
 * fabric8 CRUD mock the tests run against understands only JSON Patch and JSON Merge Patch, and running the same
 * settings in production keeps the tests honest (see the version set in the parent pom.xml). Collaborators (metrics, executor) are built
 * before the overrider lambda, which JOSDK 5.2.3 applies more than once.
 *
 * @param resync         periodic reconcile of every resource (heals replicas that restarted empty)
 * @param leaderElection Lease settings, or null to run without leader election
 * @param indexerTimeout request timeout of each call to an indexer replica
 * @param watchNamespaces namespaces both controllers (and every informer they own) watch; empty = all namespaces
 */
public record OperatorSettings(
        Duration resync,
        Clock clock,
        LeaderElectionConfiguration leaderElection,
        Duration indexerTimeout,
        Set<String> watchNamespaces) {
    public static final String LEASE_NAME = "kv-indexer-operator-lease";
    /** Set by the Helm chart from {@code watchNamespaces}: comma-separated, empty = all namespaces. */
    public static final String WATCH_NAMESPACES_ENV = "WATCH_NAMESPACES";

    private static final Pattern NAMESPACE = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");

    public OperatorSettings {
        watchNamespaces = Set.copyOf(watchNamespaces);
    }

    public static OperatorSettings defaults() {
        return new OperatorSettings(Duration.ofSeconds(30), Clock.systemUTC(), null, Duration.ofSeconds(5), Set.of());
    }

    public OperatorSettings withResync(Duration d) {
        return new OperatorSettings(d, clock, leaderElection, indexerTimeout, watchNamespaces);
    }

    public OperatorSettings withLeaderElection(String namespace, String identity) {
        return new OperatorSettings(
                resync,
                clock,
                new LeaderElectionConfiguration(LEASE_NAME, namespace, identity),
                indexerTimeout,
                watchNamespaces);
    }

    /** Restricts both controllers to {@code namespaces}; an empty set watches all namespaces. */
    public OperatorSettings withWatchNamespaces(Set<String> namespaces) {
        return new OperatorSettings(resync, clock, leaderElection, indexerTimeout, namespaces);
    }

    /**
     * Parses {@value #WATCH_NAMESPACES_ENV}: null or blank = all namespaces, else comma-separated namespace names
     * (spaces around names and empty entries are ignored).
     *
     * @throws IllegalArgumentException naming the variable and the entry when an entry is not a namespace name
     */
    public static Set<String> parseWatchNamespaces(String value) {
        if (value == null || value.isBlank()) {
            return Set.of();
        }
        Set<String> namespaces = new TreeSet<>();
        for (String entry : value.split(",")) {
            String ns = entry.strip();
            if (ns.isEmpty()) {
                continue;
            }
            if (!NAMESPACE.matcher(ns).matches()) {
                throw new IllegalArgumentException(WATCH_NAMESPACES_ENV + ": \"" + ns + "\" is not a namespace name"
                        + " (lower-case letters, digits and '-', at most 63 characters)");
            }
            namespaces.add(ns);
        }
        return namespaces;
    }

    /** What {@link #createOperator} wires: the operator plus the parts callers may want to reach. */
    public record Wiring(
            Operator operator, OperatorMetrics metrics, IndexerClient indexerClient, Retention retention) {}

    /** Builds the operator with both controllers registered; the caller starts it. */
    public Wiring createOperator(KubernetesClient client, PrometheusRegistry registry) {
        OperatorMetrics metrics = new OperatorMetrics(registry);
        ExecutorService reconcilers = Executors.newVirtualThreadPerTaskExecutor();
        IndexerClient indexerClient = new IndexerClient(
                Duration.ofSeconds(2),
                indexerTimeout,
                metrics,
                io.kvindexer.operator.indexer.AuthSecret.operatorToken(System.getenv()),
                tlsIdle());
        EventRecorder events = new EventRecorder(client, clock);
        Operator operator = new Operator(overrider(client, metrics, reconcilers));
        ControllerServices services = new ControllerServices(indexerClient, clock, events, metrics, resync);
        operator.register(new KvIndexerReconciler(services), this::namespaces);
        operator.register(new KvWorkerReconciler(services), this::namespaces);
        return new Wiring(operator, metrics, indexerClient, services.retention());
    }

    /**
     * How long a TLS client of the indexer client may go unused before it is closed: four resync periods (every
     * KvIndexer's Ready replicas are called at least once a period), at least a minute.
     */
    Duration tlsIdle() {
        Duration four = resync.multipliedBy(4);
        return four.compareTo(Duration.ofMinutes(1)) < 0 ? Duration.ofMinutes(1) : four;
    }

    /**
     * The controller's namespaces. Its informers (dependents, pod informers, the KvIndexer informer of the KvWorker
     * controller) inherit them: they are built with the controller's namespaces, never their own.
     */
    <P extends HasMetadata> void namespaces(ControllerConfigurationOverrider<P> controller) {
        if (watchNamespaces.isEmpty()) {
            controller.watchingAllNamespaces();
        } else {
            controller.settingNamespaces(watchNamespaces);
        }
    }

    Consumer<ConfigurationServiceOverrider> overrider(
            KubernetesClient client, OperatorMetrics metrics, ExecutorService reconcilers) {
        return o -> {
            o.withKubernetesClient(client)
                    .withCloseClientOnStop(false)
                    .withUseSSAToPatchPrimaryResource(false)
                    .withSSABasedCreateUpdateMatchForDependentResources(false)
                    .withMetrics(metrics)
                    .withExecutorService(reconcilers)
                    .withStopOnInformerErrorDuringStartup(false)
                    .withCacheSyncTimeout(Duration.ofMinutes(2))
                    .withReconciliationTerminationTimeout(Duration.ofSeconds(10));
            if (leaderElection != null) {
                o.withLeaderElectionConfiguration(leaderElection);
            }
        };
    }
}

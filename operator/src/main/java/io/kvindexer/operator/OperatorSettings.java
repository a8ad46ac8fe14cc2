package io.kvindexer.operator;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.config.ConfigurationServiceOverrider;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.kvindexer.operator.client.IndexerClient;
import io.kvindexer.operator.indexer.KvIndexerReconciler;
import io.kvindexer.operator.observability.EventRecorder;
import io.kvindexer.operator.observability.OperatorMetrics;
import io.kvindexer.operator.worker.KvWorkerReconciler;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;

/**
 * The one place that configures the Java Operator SDK, used by {@link OperatorMain} and by the tests alike.
 *
 * <p>Server-side apply is switched off for primary (status, finalizer) patches and for dependent matching: the
 * fabric8 CRUD mock the tests run against understands only JSON Patch and JSON Merge Patch, and running the same
 * settings in production keeps the tests honest (see docs: design §7). Collaborators (metrics, executor) are built
 * before the overrider lambda, which JOSDK 5.2.3 applies more than once.
 *
 * @param resync         periodic reconcile of every resource (heals replicas that restarted empty)
 * @param leaderElection Lease settings, or null to run without leader election
 * @param indexerTimeout request timeout of each call to an indexer replica
 */
public record OperatorSettings(Duration resync, Clock clock, LeaderElectionConfiguration leaderElection,
        Duration indexerTimeout) {
    public static final String LEASE_NAME = "kv-indexer-operator-lease";

    public static OperatorSettings defaults() {
        return new OperatorSettings(Duration.ofSeconds(30), Clock.systemUTC(), null, Duration.ofSeconds(5));
    }

    public OperatorSettings withResync(Duration d) {
        return new OperatorSettings(d, clock, leaderElection, indexerTimeout);
    }

    public OperatorSettings withLeaderElection(String namespace, String identity) {
        return new OperatorSettings(resync, clock, new LeaderElectionConfiguration(LEASE_NAME, namespace, identity),
                indexerTimeout);
    }

    /** What {@link #createOperator} wires: the operator plus the parts callers may want to reach. */
    public record Wiring(Operator operator, OperatorMetrics metrics, IndexerClient indexerClient) {
    }

    /** Builds the operator with both controllers registered; the caller starts it. */
    public Wiring createOperator(KubernetesClient client, PrometheusRegistry registry) {
        OperatorMetrics metrics = new OperatorMetrics(registry);
        ExecutorService reconcilers = Executors.newVirtualThreadPerTaskExecutor();
        IndexerClient indexerClient = new IndexerClient(Duration.ofSeconds(2), indexerTimeout, metrics);
        EventRecorder events = new EventRecorder(client, clock);
        Operator operator = new Operator(overrider(client, metrics, reconcilers));
        operator.register(new KvIndexerReconciler(indexerClient, clock, events, metrics, resync));
        operator.register(new KvWorkerReconciler(indexerClient, clock, events, metrics, resync));
        return new Wiring(operator, metrics, indexerClient);
    }

    Consumer<ConfigurationServiceOverrider> overrider(KubernetesClient client, OperatorMetrics metrics,
            ExecutorService reconcilers) {
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

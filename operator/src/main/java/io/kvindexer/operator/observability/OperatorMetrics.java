package io.kvindexer.operator.observability;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import io.javaoperatorsdk.operator.api.reconciler.RetryInfo;
import io.kvindexer.operator.client.IndexerClient;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.Set;

/**
 * The operator's Prometheus metrics, registered once in the given registry (build it before JOSDK's configuration
 * lambda, which runs more than once). Also JOSDK's {@link Metrics} hook. Note for an upgrade past JOSDK 5.2: the
 * hooks are renamed in 5.3 (reconcileCustomResource → reconciliationSubmitted, failedReconciliation →
 * reconciliationFailed, reconciliationExecutionFinished → reconciliationSucceeded).
 */
public class OperatorMetrics implements Metrics, IndexerClient.CallObserver {
    private final Counter reconciliations;
    private final Counter errors;
    private final Counter registrations;
    private final Histogram callSeconds;

    public OperatorMetrics(PrometheusRegistry registry) {
        reconciliations = counter(
                registry,
                "kvindexer_operator_reconciliations_total",
                "Reconciliations started, by resource kind",
                "kind");
        errors = counter(
                registry,
                "kvindexer_operator_reconcile_errors_total",
                "Failed reconciliations and failed replica calls inside them, by controller",
                "controller");
        registrations = counter(
                registry,
                "kvindexer_operator_registrations_total",
                "Engine (instance, dp rank) registrations made or removed on indexer replicas",
                "action");
        callSeconds = Histogram.builder()
                .name("kvindexer_operator_indexer_call_seconds")
                .help("Latency of the operator's calls to indexer replicas")
                .labelNames("replica", "operation", "result")
                .register(registry);
        // exported at 0 from the start, so dashboards and alerts see the series before the first event
        registrations.initLabelValues("registered");
        registrations.initLabelValues("unregistered");
        errors.initLabelValues("kvindexer");
        errors.initLabelValues("kvworker");
    }

    private static Counter counter(PrometheusRegistry registry, String name, String help, String label) {
        return Counter.builder().name(name).help(help).labelNames(label).register(registry);
    }

    @Override
    public void reconcileCustomResource(HasMetadata resource, RetryInfo retryInfo, Map<String, Object> metadata) {
        reconciliations.labelValues(resource.getKind()).inc();
    }

    @Override
    public void failedReconciliation(HasMetadata resource, Exception exception, Map<String, Object> metadata) {
        errors.labelValues(resource.getKind().toLowerCase()).inc();
    }

    public void reconcileError(String controller) {
        errors.labelValues(controller).inc();
    }

    public void registered(int n) {
        if (n > 0) {
            registrations.labelValues("registered").inc(n);
        }
    }

    public void unregistered(int n) {
        if (n > 0) {
            registrations.labelValues("unregistered").inc(n);
        }
    }

    /**
     * Drops the call latency series of every replica not in {@code live} ({@code <namespace>/<pod>}): a replica
     * scaled away or whose KvIndexer was deleted would otherwise keep its series for as long as the operator runs.
     * The label names the namespace too, so a KvIndexer of the same name in another namespace neither shares the
     * series nor keeps them.
     */
    public void retainReplicas(Set<String> live) {
        callSeconds.removeIf(labels -> !live.contains(labels.getFirst()));
    }

    @Override
    public void observe(String replica, String operation, Duration elapsed, boolean ok) {
        callSeconds.labelValues(replica, operation, ok ? "ok" : "error").observe(elapsed.toNanos() / 1e9);
    }
}

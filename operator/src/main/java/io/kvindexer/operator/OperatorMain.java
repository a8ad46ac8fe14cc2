package io.kvindexer.operator;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.javaoperatorsdk.operator.Operator;
import io.kvindexer.logging.LogSettings;
import io.kvindexer.logging.ShutdownLogManager;
import io.kvindexer.operator.observability.ProbeServer;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code java -jar kv-indexer-operator.jar [flags]} (see {@link OperatorCli}, {@code --help}). Wiring only: command
 * line → settings → client → operator → probes, and one shutdown path that undoes it in reverse order (operator and
 * its indexer client, probes, client). Leader election (a Lease) is on when running in a cluster (POD_NAME and POD_NAMESPACE from the
 * downward API) unless switched off.
 */
public final class OperatorMain {
    static {
        ShutdownLogManager.Install.now(); // before the logger below: getting one sets JUL up
    }

    private static final Logger LOG = LoggerFactory.getLogger(OperatorMain.class);

    private OperatorMain() {}

    public static void main(String[] args) throws IOException {
        OperatorCli.Parsed parsed;
        LogSettings logs;
        try {
            parsed = OperatorCli.parse(args, System.getenv());
            logs = LogSettings.fromEnv(System.getenv());
        } catch (OperatorCli.UsageException e) {
            System.err.println("kv-indexer-operator: " + e.getMessage());
            System.err.println("Try 'kv-indexer-operator --help' for the flags.");
            System.exit(2);
            return;
        } catch (IllegalArgumentException e) { // an environment variable of LogSettings
            System.err.println("kv-indexer-operator: " + e.getMessage());
            System.exit(2);
            return;
        }
        if (parsed.options() == null) {
            System.out.print(parsed.helpText());
            return;
        }
        logs.apply(Map.of());
        start(parsed.options());
    }

    private static void start(OperatorCli.Options options) throws IOException {
        OperatorSettings settings =
                OperatorSettings.defaults().withResync(options.resync()).withWatchNamespaces(options.watchNamespaces());
        String podName = System.getenv("POD_NAME");
        String podNamespace = System.getenv("POD_NAMESPACE");
        boolean inCluster = podName != null
                && podNamespace != null
                && Files.exists(Path.of("/var/run/secrets/kubernetes.io/serviceaccount/token"));
        if (options.leaderElection() && inCluster) {
            settings = settings.withLeaderElection(podNamespace, podName);
        }
        PrometheusRegistry registry = new PrometheusRegistry();
        JvmMetrics.builder().register(registry); // jvm_* and process_*: heap, GC, threads, file descriptors, memory
        KubernetesClient client = new KubernetesClientBuilder().build();
        AtomicReference<Operator> running = new AtomicReference<>();
        ProbeServer probes = new ProbeServer(
                new InetSocketAddress(options.probePort()),
                () -> running.get() == null ? null : running.get().getRuntimeInfo(),
                registry);
        OperatorSettings.Wiring wiring = settings.createOperator(client, registry);
        Operator operator = wiring.operator();
        running.set(operator);
        // not JOSDK's installShutdownHook: its hook would race ours (JVM hooks run concurrently) and, with leader
        // election on, it installs none at all
        new ShutdownSequence()
                .then("operator", operator::stop)
                .then("indexer client", wiring.indexerClient())
                .then("probes", probes)
                .then("client", client)
                .install();
        operator.start();
        LOG.atInfo()
                .addKeyValue("probePort", probes.port())
                .addKeyValue("resyncSeconds", options.resync().toSeconds())
                .addKeyValue("leaderElection", settings.leaderElection() != null)
                .addKeyValue(
                        "watchNamespaces",
                        settings.watchNamespaces().isEmpty()
                                ? "all"
                                : String.join(",", new TreeSet<>(settings.watchNamespaces())))
                .log("kv-indexer-operator started");
    }
}

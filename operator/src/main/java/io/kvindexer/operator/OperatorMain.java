package io.kvindexer.operator;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.javaoperatorsdk.operator.Operator;
import io.kvindexer.operator.observability.ProbeServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code java -jar kv-indexer-operator.jar [--probe-port 8081] [--resync-seconds 30] [--leader-election=false]}.
 * Wiring only: settings → client → operator → probes. Leader election (a Lease) is on when running in a cluster
 * (POD_NAME and POD_NAMESPACE from the downward API) unless switched off. WATCH_NAMESPACES (comma-separated,
 * empty = all) restricts both controllers to those namespaces.
 */
public final class OperatorMain {
    private static final Logger LOG = LoggerFactory.getLogger(OperatorMain.class);

    private OperatorMain() {}

    public static void main(String[] args) throws IOException {
        if (System.getProperty("java.util.logging.SimpleFormatter.format") == null) {
            System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tFT%1$tT.%1$tLZ %4$s %3$s %5$s%6$s%n");
        }
        int probePort = 8081;
        long resyncSeconds = 30;
        boolean leaderElection = true;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--probe-port" -> probePort = Integer.parseInt(value(args, ++i, "--probe-port"));
                case "--resync-seconds" -> resyncSeconds = Long.parseLong(value(args, ++i, "--resync-seconds"));
                case "--leader-election=false" -> leaderElection = false;
                case "--leader-election=true", "--leader-election" -> leaderElection = true;
                case "-h", "--help" -> {
                    System.out.println("usage: kv-indexer-operator [--probe-port N] [--resync-seconds N]"
                            + " [--leader-election=false]");
                    return;
                }
                default -> throw new IllegalArgumentException("unknown flag " + args[i]);
            }
        }
        OperatorSettings settings = OperatorSettings.defaults()
                .withResync(Duration.ofSeconds(resyncSeconds))
                .withWatchNamespaces(
                        OperatorSettings.parseWatchNamespaces(System.getenv(OperatorSettings.WATCH_NAMESPACES_ENV)));
        String podName = System.getenv("POD_NAME");
        String podNamespace = System.getenv("POD_NAMESPACE");
        boolean inCluster = podName != null
                && podNamespace != null
                && Files.exists(Path.of("/var/run/secrets/kubernetes.io/serviceaccount/token"));
        if (leaderElection && inCluster) {
            settings = settings.withLeaderElection(podNamespace, podName);
        }
        PrometheusRegistry registry = new PrometheusRegistry();
        KubernetesClient client = new KubernetesClientBuilder().build();
        AtomicReference<Operator> running = new AtomicReference<>();
        ProbeServer probes = new ProbeServer(
                new InetSocketAddress(probePort),
                () -> running.get() == null ? null : running.get().getRuntimeInfo(),
                registry);
        Operator operator = settings.createOperator(client, registry).operator();
        running.set(operator);
        operator.installShutdownHook(Duration.ofSeconds(10));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            probes.close();
            client.close();
        }));
        operator.start();
        LOG.atInfo()
                .addKeyValue("probePort", probes.port())
                .addKeyValue("resyncSeconds", resyncSeconds)
                .addKeyValue("leaderElection", settings.leaderElection() != null)
                .addKeyValue(
                        "watchNamespaces",
                        settings.watchNamespaces().isEmpty()
                                ? "all"
                                : String.join(",", new TreeSet<>(settings.watchNamespaces())))
                .log("kv-indexer-operator started");
    }

    private static String value(String[] args, int i, String flag) {
        if (i >= args.length) {
            throw new IllegalArgumentException(flag + " needs a value");
        }
        return args[i];
    }
}

package io.kvindexer.operator.e2e;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.operator.client.IndexerClient;
import io.kvindexer.operator.client.IndexerEndpoint;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.indexer.IndexerNames;
import io.kvindexer.operator.reconcile.PodConditions;
import io.kvindexer.operator.support.OperatorHarness;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Plays what a cluster would do around the operator, on loopback addresses: the StatefulSet controller and kubelet
 * (start a real indexer server for replica i on 127.0.0.(2+i) with the StatefulSet's own args, mark its pod Ready
 * once /ready answers 200), cluster DNS together with the indexer's {@code --peers-dns} (the headless Service's
 * name resolves to the Ready replicas' addresses, never to the starting replica itself, and the indexer recovers
 * from the first that answers: here the resolved addresses are handed to the indexer as {@code --peers}; the real
 * flag is exercised by {@link PeersDnsEndToEndTest}) and engine pods (real engine simulators on 127.0.0.(10+k)).
 */
final class LoopbackCluster implements AutoCloseable {
    private static final Pattern PEERS_DNS = Pattern.compile("([a-z0-9-]+)-peers\\.([a-z0-9-]+)\\.svc:(\\d+)");

    final KubernetesClient client;
    final OperatorHarness harness;
    final IndexerClient http =
            new IndexerClient(Duration.ofSeconds(2), Duration.ofSeconds(10), IndexerClient.CallObserver.NONE);
    private final Map<String, IndexerApp> indexers = new HashMap<>();
    private final Map<String, EngineSimulator> engines = new HashMap<>();

    LoopbackCluster(KubernetesClient client, OperatorHarness harness) {
        this.client = client;
        this.harness = harness;
    }

    /** The indexer container of a StatefulSet's pod template, as the operator wrote it (null: no StatefulSet yet). */
    static Container indexerContainer(KubernetesClient client, String ns, String statefulSet) {
        StatefulSet sts = client.apps()
                .statefulSets()
                .inNamespace(ns)
                .withName(statefulSet)
                .get();
        return sts == null
                ? null
                : sts.getSpec().getTemplate().getSpec().getContainers().getFirst();
    }

    static String replicaIp(int ordinal) {
        return "127.0.0." + (2 + ordinal);
    }

    static String engineIp(int k) {
        return "127.0.0." + (10 + k);
    }

    /** A TCP port free on every given loopback address (the operator uses one port for all replicas / engines). */
    static int freePort(String... ips) {
        for (int attempt = 0; attempt < 200; attempt++) {
            int port;
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress(InetAddress.getByName(ips[0]), 0));
                port = s.getLocalPort();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            boolean ok = true;
            for (String ip : ips) {
                try (ServerSocket s = new ServerSocket()) {
                    s.setReuseAddress(true);
                    s.bind(new InetSocketAddress(InetAddress.getByName(ip), port));
                } catch (IOException e) {
                    ok = false;
                    break;
                }
            }
            if (ok) {
                return port;
            }
        }
        throw new IllegalStateException("no common free port");
    }

    KvIndexer kvIndexer(String ns, String name) {
        return harness.kvIndexer(ns, name);
    }

    /** Starts replica {@code ordinal} from the StatefulSet's current args; returns once its pod is Ready. */
    IndexerApp startReplica(String ns, String name, int ordinal) throws Exception {
        KvIndexer kvi = kvIndexer(ns, name);
        StatefulSet sts = await().atMost(Duration.ofSeconds(30))
                .until(
                        () -> client.apps()
                                .statefulSets()
                                .inNamespace(ns)
                                .withName(name)
                                .get(),
                        s -> s != null);
        List<String> args = new ArrayList<>(List.of("--host", replicaIp(ordinal)));
        List<String> template =
                sts.getSpec().getTemplate().getSpec().getContainers().getFirst().getArgs();
        for (int i = 0; i < template.size(); i++) {
            if (template.get(i).equals("--peers-dns")) {
                String peers = resolvePeersDns(template.get(++i), ordinal);
                if (!peers.isEmpty()) {
                    args.add("--peers");
                    args.add(peers);
                }
            } else {
                args.add(template.get(i));
            }
        }
        String pod = IndexerNames.pod(kvi, ordinal);
        harness.upsertPod(
                new ObjectMetaBuilder()
                        .withName(pod)
                        .withNamespace(ns)
                        .withLabels(IndexerNames.labels(kvi))
                        .build(),
                replicaIp(ordinal),
                false);
        IndexerApp app = IndexerApp.start(args.toArray(String[]::new));
        indexers.put(ns + "/" + pod, app);
        IndexerEndpoint endpoint = replica(kvi, ordinal);
        await().atMost(Duration.ofSeconds(60)).until(() -> http.ready(endpoint));
        harness.startReplicaPod(kvi, ordinal, replicaIp(ordinal));
        return app;
    }

    /** The indexer process currently playing replica {@code ordinal}, or null. */
    IndexerApp runningReplica(String ns, String name, int ordinal) {
        return indexers.get(ns + "/" + name + "-" + ordinal);
    }

    /** The process dies; the pod object stays (as it would until the kubelet notices). */
    void killReplica(String ns, String name, int ordinal) {
        IndexerApp app = indexers.remove(ns + "/" + name + "-" + ordinal);
        if (app != null) {
            app.close();
        }
    }

    /** Scale-down by the StatefulSet controller: process gone, pod deleted. */
    void removeReplica(String ns, String name, int ordinal) {
        killReplica(ns, name, ordinal);
        harness.deletePod(ns, name + "-" + ordinal);
    }

    /**
     * Cluster DNS for {@code --peers-dns <name>-peers.<ns>.svc:<port>}: the Ready replica pods of that KvIndexer
     * (the headless Service publishes no not-Ready address, so never {@code self} while it starts), as peer URLs.
     */
    String resolvePeersDns(String name, int self) {
        Matcher m = PEERS_DNS.matcher(name);
        if (!m.matches()) {
            throw new IllegalArgumentException("not a headless Service name:port: " + name);
        }
        String instance = m.group(1);
        List<String> out = new ArrayList<>();
        client
                .pods()
                .inNamespace(m.group(2))
                .withLabel(IndexerNames.LABEL_INSTANCE, instance)
                .list()
                .getItems()
                .stream()
                .filter(PodConditions::isReady)
                .filter(p -> !p.getMetadata().getName().equals(instance + "-" + self))
                .sorted(java.util.Comparator.comparing(p -> p.getMetadata().getName()))
                .forEach(p -> out.add("http://" + p.getStatus().getPodIP() + ":" + m.group(3)));
        return String.join(",", out);
    }

    IndexerEndpoint replica(KvIndexer kvi, int ordinal) {
        return IndexerEndpoint.of(
                IndexerNames.pod(kvi, ordinal),
                replicaIp(ordinal),
                kvi.getSpec().getPort());
    }

    /** An engine pod: a real simulator bound to its pod IP, and the pod object Ready at that IP. */
    EngineSimulator startEngine(
            String ns, String pod, Map<String, String> labels, int k, int zmqPort, Integer replayPort) {
        String ip = engineIp(k);
        EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.builder()
                .endpoint("tcp://" + ip + ":" + zmqPort)
                .replayEndpoint(replayPort == null ? null : "tcp://" + ip + ":" + replayPort)
                .build());
        EngineSimulator old = engines.put(ns + "/" + pod, sim);
        if (old != null) {
            old.close();
        }
        harness.startEnginePod(ns, pod, labels, ip, true);
        return sim;
    }

    /** An engine simulator started by the test itself (other addresses), closed with the cluster. */
    void adoptEngine(String ns, String pod, EngineSimulator sim) {
        EngineSimulator old = engines.put(ns + "/" + pod, sim);
        if (old != null) {
            old.close();
        }
    }

    void stopEngine(String ns, String pod) {
        EngineSimulator sim = engines.remove(ns + "/" + pod);
        if (sim != null) {
            sim.close();
        }
    }

    @Override
    public void close() {
        indexers.values().forEach(IndexerApp::close);
        engines.values().forEach(EngineSimulator::close);
        indexers.clear();
        engines.clear();
    }
}

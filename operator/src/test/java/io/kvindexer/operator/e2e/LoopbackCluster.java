package io.kvindexer.operator.e2e;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.operator.client.IndexerClient;
import io.kvindexer.operator.client.IndexerEndpoint;
import io.kvindexer.operator.client.RegisteredWorker;
import io.kvindexer.operator.client.ReplicaAccess;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.reconcile.PodConditions;
import io.kvindexer.operator.reconcile.ReplicaAccesses;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import io.kvindexer.operator.worker.InstanceIds;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;

/**
 * Plays what a cluster would do around the operator, on loopback addresses: the StatefulSet controller and kubelet
 * (start a real indexer server for replica i on 127.0.0.(2+i) with the StatefulSet's own args, mark its pod Ready
 * once /ready answers 200), cluster DNS together with the indexer's {@code --peers-dns} (the headless Service's
 * name resolves to the Ready replicas' addresses, never to the starting replica itself, and the indexer recovers
 * from the first that answers: here the resolved addresses are handed to the indexer as {@code --peers}, each in
 * the scheme it would ask it in, its own or those of {@code --peers-dns-schemes}; the real flags are exercised by
 * {@link PeersDnsEndToEndTest} and the indexer's {@code RollingSecurityRecoveryTest}) and engine pods (real engine simulators on 127.0.0.(10+k)).
 */
final class LoopbackCluster implements AutoCloseable {
    private static final Pattern PEERS_DNS = Pattern.compile("([a-z0-9-]+)-peers\\.([a-z0-9-]+)\\.svc:(\\d+)");

    final KubernetesClient client;
    final OperatorHarness harness;
    final IndexerClient http =
            new IndexerClient(Duration.ofSeconds(2), Duration.ofSeconds(10), IndexerClient.CallObserver.NONE);
    private final Map<String, IndexerApp> indexers = new HashMap<>();
    private final Map<String, EngineSimulator> engines = new HashMap<>();
    /** How each replica process this cluster started serves (namespace/pod → access): as its spec said then. */
    private final Map<String, ReplicaAccess> startedAs = new java.util.concurrent.ConcurrentHashMap<>();
    /** Where the "kubelet" writes the Secret volumes of replica pods. */
    private final java.nio.file.Path secretsRoot;

    LoopbackCluster(OperatorHarness harness) {
        this.client = harness.client();
        this.harness = harness;
        try {
            this.secretsRoot = java.nio.file.Files.createTempDirectory("loopback-secrets");
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static String replicaIp(int ordinal) {
        return "127.0.0." + (2 + ordinal);
    }

    /** The addresses of replicas 0 to {@code replicas - 1}. */
    static String[] replicaIps(int replicas) {
        return IntStream.range(0, replicas).mapToObj(LoopbackCluster::replicaIp).toArray(String[]::new);
    }

    static String engineIp(int k) {
        return "127.0.0." + (10 + k);
    }

    /** The addresses of engine slots 0 to {@code engines - 1}. */
    static String[] engineIps(int engines) {
        return IntStream.range(0, engines).mapToObj(LoopbackCluster::engineIp).toArray(String[]::new);
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

    /** Creates a KvIndexer {@code name} and starts its replicas one by one, each once the previous is Ready. */
    KvIndexer startIndexer(String ns, String name, int replicas, int port) throws Exception {
        harness.create(Resources.kvIndexer(ns, name, replicas, port));
        for (int i = 0; i < replicas; i++) {
            startReplica(ns, name, i);
        }
        return kvIndexer(ns, name);
    }

    /** Starts replica {@code ordinal} from the StatefulSet's current args; returns once its pod is Ready. */
    IndexerApp startReplica(String ns, String name, int ordinal) throws Exception {
        return startReplica(ns, name, ordinal, true);
    }

    /**
     * Starts replica {@code ordinal} with no peer to recover from, as when every replica restarted at once (the
     * headless Service's name resolves to no address); returns once its pod is Ready.
     */
    IndexerApp startReplicaAlone(String ns, String name, int ordinal) throws Exception {
        return startReplica(ns, name, ordinal, false);
    }

    /**
     * The volume of replica {@code ordinal} (the claim {@code state-<pod>} of the StatefulSet's claim template): a
     * directory under target/ that outlives the replica's process, as a PersistentVolume outlives its pod.
     */
    static Path volume(String ns, String pod) {
        return Path.of("target", "volumes", ns, "state-" + pod).toAbsolutePath();
    }

    private IndexerApp startReplica(String ns, String name, int ordinal, boolean peers) throws Exception {
        KvIndexer kvi = kvIndexer(ns, name);
        Container indexer =
                await().atMost(Duration.ofSeconds(30)).until(() -> harness.indexerContainer(ns, name), c -> c != null);
        List<String> args = new ArrayList<>(List.of("--host", replicaIp(ordinal)));
        List<String> template = mountedArgs(ns, name, ordinal);
        boolean tls = template.contains("--tls-cert-file");
        // as the indexer asks each resolved address: in its own scheme, or in those of --peers-dns-schemes in order
        int schemesAt = template.indexOf("--peers-dns-schemes");
        List<String> schemes = schemesAt < 0
                ? List.of(tls ? "https" : "http")
                : List.of(template.get(schemesAt + 1).split(","));
        for (int i = 0; i < template.size(); i++) {
            if (template.get(i).equals("--peers-dns")) {
                String found = peers ? resolvePeersDns(template.get(++i), ordinal, schemes) : "";
                i += peers ? 0 : 1;
                if (!found.isEmpty()) {
                    args.add("--peers");
                    args.add(found);
                }
            } else if (template.get(i).equals("--peers-dns-schemes")) {
                i++; // applied above: the indexer is given the resolved addresses as --peers
            } else if (template.get(i).equals("--snapshot-dir")) {
                // the kubelet mounts the replica's own claim where the template says
                Path volume = volume(ns, IndexerNames.pod(kvi, ordinal));
                Files.createDirectories(volume);
                args.add("--snapshot-dir");
                args.add(volume.toString());
                i++;
            } else {
                args.add(template.get(i));
            }
        }
        // the pod made from the template its args were read from: it tells the operator how it serves
        PodSpec spec = harness.statefulSet(ns, name).getSpec().getTemplate().getSpec();
        harness.replicaPod(kvi, ordinal, replicaIp(ordinal), false, spec);
        IndexerApp app = IndexerApp.start(args.toArray(String[]::new));
        indexers.put(ns + "/" + IndexerNames.pod(kvi, ordinal), app);
        startedAs.put(ns + "/" + IndexerNames.pod(kvi, ordinal), ReplicaAccesses.read(client, kvi));
        IndexerEndpoint endpoint = replica(kvi, ordinal);
        // a TLS handshake on a loaded machine can outlast the connect timeout: keep asking until the deadline
        await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() -> http.ready(endpoint));
        harness.replicaPod(kvi, ordinal, replicaIp(ordinal), true, spec);
        return app;
    }

    /**
     * The StatefulSet's indexer args for replica {@code ordinal} with its Secret volumes written out (as the kubelet
     * mounts them) and the args pointing there.
     */
    List<String> mountedArgs(String ns, String name, int ordinal) {
        Container indexer = harness.indexerContainer(ns, name);
        SecretVolumes secrets = SecretVolumes.mount(
                client,
                ns,
                harness.statefulSet(ns, name).getSpec().getTemplate().getSpec(),
                indexer,
                secretsRoot.resolve(ns).resolve(name + "-" + ordinal));
        return secrets.rewrite(indexer.getArgs());
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
    String resolvePeersDns(String name, int self, List<String> schemes) {
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
                .forEach(p -> schemes.forEach(
                        scheme -> out.add(scheme + "://" + p.getStatus().getPodIP() + ":" + m.group(3))));
        return String.join(",", out);
    }

    /**
     * Replica {@code ordinal} reached as the process playing it serves: with the scheme, token and CA of the spec it
     * was started from (a change of spec.security reaches a replica only once it restarts), or as the spec says now
     * for a replica this cluster did not start.
     */
    IndexerEndpoint replica(KvIndexer kvi, int ordinal) {
        String name = IndexerNames.pod(kvi, ordinal);
        ReplicaAccess access = startedAs.get(kvi.getMetadata().getNamespace() + "/" + name);
        return IndexerEndpoint.of(
                name,
                replicaIp(ordinal),
                kvi.getSpec().getPort(),
                access != null ? access : ReplicaAccesses.read(client, kvi));
    }

    /** The {@code scores} of a {@code /query} for {@code tokens} (tenant {@code default}) on one replica. */
    JsonNode scores(IndexerEndpoint replica, String model, int[] tokens) {
        return http.query(
                        replica, model, "default", IntStream.of(tokens).boxed().toList())
                .path("scores");
    }

    /** Tokens of {@code tokens} that {@code instance} (rank 0) holds, by {@code /query} on one replica. */
    int matched(IndexerEndpoint replica, String model, int[] tokens, long instance) {
        return scores(replica, model, tokens)
                .path(Long.toUnsignedString(instance))
                .path("0")
                .asInt(0);
    }

    /**
     * What every replica should have registered for engine pods started by {@link #startEngine} (pod name → engine
     * IP slot): instance id → rank 0's endpoint.
     */
    static Map<Long, String> engineEndpoints(String ns, Map<String, Integer> pods, int zmqPort) {
        Map<Long, String> expected = new HashMap<>();
        pods.forEach((pod, k) -> expected.put(InstanceIds.hashOf(ns, pod), "tcp://" + engineIp(k) + ":" + zmqPort));
        return expected;
    }

    /** What one replica has registered for {@code model}: instance id → rank 0's endpoint. */
    Map<Long, String> registrations(IndexerEndpoint replica, String model) {
        Map<Long, String> found = new HashMap<>();
        for (RegisteredWorker w : http.workers(replica, model, "default")) {
            found.put(w.instanceId(), w.endpoints().get(0));
        }
        return found;
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

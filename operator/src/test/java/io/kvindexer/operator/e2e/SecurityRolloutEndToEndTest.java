package io.kvindexer.operator.e2e;

import static io.kvindexer.operator.support.OperatorHarness.WAIT;
import static io.kvindexer.operator.support.Resources.VLLM;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.KvIndexerStatus;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.crd.v1alpha1.Security;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import io.kvindexer.operator.worker.InstanceIds;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A change of {@code spec.security} rolls the replicas one at a time, and a rollout may stop half-way (a
 * PodDisruptionBudget, a new pod that does not start): the operator must keep managing the replicas not restarted
 * yet, as they still serve. Real indexer processes as the replicas, on the mock API server; the test plays the
 * StatefulSet controller and restarts only the highest ordinal with the new template. An engine pod added meanwhile
 * is registered on both replicas, neither the KvWorker nor the KvIndexer turns Degraded, and each replica's peer
 * list names the other in the scheme it serves. And no change loses the index, without {@code spec.persistence}:
 * each restarted replica holds what the engine stored before (it recovers from the replica on the old template,
 * and the engine has no replay port to fill it in otherwise), through the rollout and the second one that follows
 * once every replica serves as the spec says ({@code FormerPeers} leaves the template).
 */
class SecurityRolloutEndToEndTest {
    @RegisterExtension
    static final OperatorHarness harness = OperatorHarness.onMockApiServer(Duration.ofSeconds(2));

    private static final String NS = "rollout";
    private static final String NS_ON = "rollout-on";
    /** What the engine stores before each change, three blocks of 4 tokens each. */
    private static final int[] BEFORE_TOKEN_OFF = IntStream.rangeClosed(1, 12).toArray();

    private static final int[] BEFORE_TLS_OFF = IntStream.rangeClosed(101, 112).toArray();
    private static final int[] BEFORE_TLS_ON = IntStream.rangeClosed(201, 212).toArray();

    /**
     * Two changes, each rolled to replica 1 only: the token off (replica 0 still wants the token of the Secret it
     * mounts, kept while it does), then TLS off (replica 0 still serves HTTPS with its certificate and the token).
     */
    @Test
    void replicasNotRestartedYetStayManagedAsTheyServe() throws Exception {
        int port = LoopbackCluster.freePort(LoopbackCluster.replicaIps(2));
        int zmqPort = LoopbackCluster.freePort(LoopbackCluster.engineIps(3));
        String peers = "kv-peers." + NS + ".svc:" + port;
        try (LoopbackCluster cluster = new LoopbackCluster(harness)) {
            KvIndexer kvi = cluster.startIndexer(NS, "kv", 2, port);
            EngineSimulator engine = cluster.startEngine(NS, "vllm-0", VLLM, 0, zmqPort, null);
            harness.create(Resources.kvWorker(NS, "vllm", "kv", VLLM, "llama", 4, zmqPort, null, 1));
            awaitRegistered(cluster, kvi, 1, zmqPort);
            storeUntilHeld(cluster, kvi, engine, BEFORE_TOKEN_OFF);

            rollReplica1(cluster, kvi, "{\"auth\":{\"enabled\":false}}", args -> !args.contains("--auth-token-file"));
            assertHeld(cluster, kvi, 1, BEFORE_TOKEN_OFF);
            cluster.startEngine(NS, "vllm-1", VLLM, 1, zmqPort, null);
            awaitRegistered(cluster, kvi, 2, zmqPort);
            awaitWell(cluster, kvi, 2, "https://kv-0." + peers, "https://kv-1." + peers);

            storeUntilHeld(cluster, kvi, engine, BEFORE_TLS_OFF);
            rollReplica1(cluster, kvi, "{\"tls\":{\"enabled\":false}}", args -> !args.contains("--tls-cert-file"));
            assertHeld(cluster, kvi, 1, BEFORE_TOKEN_OFF, BEFORE_TLS_OFF);
            assertThat(cluster.replica(kvi, 0).baseUrl().getScheme()).isEqualTo("https");
            assertThat(cluster.replica(kvi, 1).baseUrl().getScheme()).isEqualTo("http");
            cluster.startEngine(NS, "vllm-2", VLLM, 2, zmqPort, null);
            awaitRegistered(cluster, kvi, 3, zmqPort);
            awaitWell(cluster, kvi, 3, "https://kv-0." + peers, "http://kv-1." + peers);

            // the rollout ends: replica 0 restarts too, and is managed as it now serves
            restart(cluster, kvi, 0);
            assertHeld(cluster, kvi, 0, BEFORE_TOKEN_OFF, BEFORE_TLS_OFF);
            awaitRegistered(cluster, kvi, 3, zmqPort);
            awaitWell(cluster, kvi, 3, "http://kv-0." + peers, "http://kv-1." + peers);
            secondRollout(cluster, kvi, BEFORE_TOKEN_OFF, BEFORE_TLS_OFF);
            harness.deleteKvWorkers(NS, WAIT);
            harness.client().resources(KvIndexer.class).inNamespace(NS).delete();
        }
    }

    /**
     * TLS and the token turned on together: the restarted replica serves HTTPS and requires the token, and recovers
     * from the one still serving plain HTTP without a token (asked over HTTPS first, then plain HTTP).
     */
    @Test
    void turningTlsAndTheTokenOnKeepsTheIndex() throws Exception {
        int port = LoopbackCluster.freePort(LoopbackCluster.replicaIps(2));
        int zmqPort = LoopbackCluster.freePort(LoopbackCluster.engineIps(1));
        try (LoopbackCluster cluster = new LoopbackCluster(harness)) {
            KvIndexer open = Resources.kvIndexer(NS_ON, "kv", 2, port);
            open.getSpec().setSecurity(new Security(new Security.Tls(false, null), new Security.Auth(false)));
            harness.create(open);
            cluster.startReplica(NS_ON, "kv", 0);
            cluster.startReplica(NS_ON, "kv", 1);
            KvIndexer kvi = cluster.kvIndexer(NS_ON, "kv");
            EngineSimulator engine = cluster.startEngine(NS_ON, "vllm-0", VLLM, 0, zmqPort, null);
            harness.create(Resources.kvWorker(NS_ON, "vllm", "kv", VLLM, "llama", 4, zmqPort, null, 1));
            await().atMost(WAIT).until(() -> engine.subscriptions() >= 2);
            storeUntilHeld(cluster, kvi, engine, BEFORE_TLS_ON);

            harness.mergePatch(
                    KvIndexer.class,
                    NS_ON,
                    "kv",
                    "{\"spec\":{\"security\":{\"tls\":{\"enabled\":true},\"auth\":{\"enabled\":true}}}}");
            await().atMost(WAIT)
                    .until(() -> harness.indexerContainer(NS_ON, "kv")
                            .getArgs()
                            .containsAll(List.of("--tls-cert-file", "--auth-token-file")));
            restart(cluster, kvi, 1);
            assertThat(cluster.replica(kvi, 1).baseUrl().getScheme()).isEqualTo("https");
            assertHeld(cluster, kvi, 1, BEFORE_TLS_ON);
            restart(cluster, kvi, 0);
            assertHeld(cluster, kvi, 0, BEFORE_TLS_ON);
            secondRollout(cluster, kvi, BEFORE_TLS_ON);
            harness.deleteKvWorkers(NS_ON, WAIT);
            harness.client().resources(KvIndexer.class).inNamespace(NS_ON).delete();
        }
    }

    /**
     * Merges {@code security} into the spec, waits until the template's args are {@code changed}, and plays the
     * StatefulSet controller's first step: replica 1 restarts with the new template, replica 0 keeps running the old
     * one.
     */
    private static void rollReplica1(
            LoopbackCluster cluster, KvIndexer kvi, String security, Predicate<List<String>> changed) throws Exception {
        harness.mergePatch(KvIndexer.class, NS, "kv", "{\"spec\":{\"security\":" + security + "}}");
        await().atMost(WAIT)
                .until(() -> changed.test(harness.indexerContainer(NS, "kv").getArgs()));
        restart(cluster, kvi, 1);
    }

    /** The StatefulSet controller restarts replica {@code ordinal} with the current template. */
    private static void restart(LoopbackCluster cluster, KvIndexer kvi, int ordinal) throws Exception {
        String ns = kvi.getMetadata().getNamespace();
        harness.replicaPod(kvi, ordinal, LoopbackCluster.replicaIp(ordinal), false);
        cluster.killReplica(ns, "kv", ordinal);
        cluster.startReplica(ns, "kv", ordinal);
    }

    /**
     * Every replica serves as the spec says: what the template had for the former ones leaves it, and the rollout
     * that follows (replica 1, then 0) keeps the index too.
     */
    private static void secondRollout(LoopbackCluster cluster, KvIndexer kvi, int[]... prompts) throws Exception {
        String ns = kvi.getMetadata().getNamespace();
        await().atMost(WAIT)
                .until(() -> Collections.disjoint(
                        harness.indexerContainer(ns, "kv").getArgs(),
                        List.of("--peers-dns-schemes", "--peer-auth-token-file")));
        for (int ordinal : new int[] {1, 0}) {
            restart(cluster, kvi, ordinal);
            assertHeld(cluster, kvi, ordinal, prompts);
        }
    }

    /**
     * Stores {@code prompt} from {@code engine} until both replicas hold it (a replica that subscribed late missed it
     * the first time; storing it again changes nothing for one that did not).
     */
    private static void storeUntilHeld(LoopbackCluster cluster, KvIndexer kvi, EngineSimulator engine, int[] prompt) {
        long id = InstanceIds.hashOf(kvi.getMetadata().getNamespace(), "vllm-0");
        await().atMost(WAIT)
                .pollInterval(Duration.ofSeconds(1))
                .ignoreExceptions()
                .until(() -> {
                    engine.storeSequence(prompt, 4).get(10, TimeUnit.SECONDS);
                    return cluster.matched(cluster.replica(kvi, 0), "llama", prompt, id) == prompt.length
                            && cluster.matched(cluster.replica(kvi, 1), "llama", prompt, id) == prompt.length;
                });
    }

    /**
     * Replica {@code ordinal}, just restarted (Ready: its recovery is over), holds every one of {@code prompts}: it
     * recovered them from its peer, as the engine stored them before and sends them no more.
     */
    private static void assertHeld(LoopbackCluster cluster, KvIndexer kvi, int ordinal, int[]... prompts) {
        long id = InstanceIds.hashOf(kvi.getMetadata().getNamespace(), "vllm-0");
        for (int[] prompt : prompts) {
            // only a failed call is asked again: the answer itself must be right the first time
            Integer matched = await().atMost(WAIT)
                    .ignoreExceptions()
                    .until(() -> cluster.matched(cluster.replica(kvi, ordinal), "llama", prompt, id), m -> m != null);
            assertThat(matched)
                    .as("tokens of a prompt stored before the change")
                    .isEqualTo(prompt.length);
        }
    }

    /**
     * Each replica's peer list names the other as it serves; the KvWorker has {@code engines} pods registered and
     * is not Degraded, nor is the KvIndexer, whose status lists each replica's URL as it serves.
     */
    private static void awaitWell(LoopbackCluster cluster, KvIndexer kvi, int engines, String url0, String url1) {
        await().atMost(WAIT)
                .ignoreExceptions()
                .until(() -> cluster.http.peers(cluster.replica(kvi, 0)).equals(List.of(url1))
                        && cluster.http.peers(cluster.replica(kvi, 1)).equals(List.of(url0)));
        await().atMost(WAIT).untilAsserted(() -> {
            KvWorker w = harness.kvWorker(NS, "vllm");
            assertThat(w.getStatus().registeredPods()).isEqualTo(engines);
            assertThat(condition(w.getStatus().conditions(), "Degraded")).isEqualTo("False");
            KvIndexerStatus s = harness.kvIndexer(NS, "kv").getStatus();
            assertThat(condition(s.conditions(), "Degraded")).isEqualTo("False");
            assertThat(s.pods()).extracting(KvIndexerStatus.ReplicaStatus::url).containsExactly(url0, url1);
        });
    }

    /** Engines 0 to {@code engines - 1} registered on both replicas, and nothing else. */
    private static void awaitRegistered(LoopbackCluster cluster, KvIndexer kvi, int engines, int zmqPort) {
        Map<String, Integer> pods = new java.util.HashMap<>();
        for (int k = 0; k < engines; k++) {
            pods.put("vllm-" + k, k);
        }
        Map<Long, String> expected = LoopbackCluster.engineEndpoints(NS, pods, zmqPort);
        for (int i = 0; i < 2; i++) {
            int ordinal = i;
            await().atMost(WAIT)
                    .ignoreExceptions()
                    .until(() -> cluster.registrations(cluster.replica(kvi, ordinal), "llama")
                            .equals(expected));
        }
    }

    private static String condition(List<Condition> conditions, String type) {
        return Resources.condition(conditions, type).getStatus();
    }
}

package io.kvindexer.operator.e2e;

import static io.kvindexer.operator.support.OperatorHarness.WAIT;
import static io.kvindexer.operator.support.Resources.VLLM;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.operator.client.IndexerEndpoint;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.Persistence;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import io.kvindexer.operator.worker.InstanceIds;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code spec.persistence}: each replica gets a volume of its own and writes its snapshot there. Every replica is
 * restarted at once, so there is no peer left to recover from: each comes back from its own volume with its
 * registrations and its blocks, and replays what the engine published while it was down.
 */
class PersistenceEndToEndTest {
    @RegisterExtension
    static final OperatorHarness harness = OperatorHarness.onMockApiServer(Duration.ofSeconds(3));

    private static final String NS = "persistence";
    private static final int BLOCK = 4;

    private static int[] tokens(int n, int offset) {
        return IntStream.rangeClosed(1, n).map(i -> i + offset).toArray();
    }

    private static int matched(LoopbackCluster cluster, IndexerEndpoint replica, int[] tokens, long instance) {
        try {
            return cluster.matched(replica, "llama", tokens, instance);
        } catch (RuntimeException e) {
            return -1;
        }
    }

    /** When the newest snapshot in {@code volume} was written, or 0 while there is none. */
    private static long newestSnapshot(Path volume) throws IOException {
        try (Stream<Path> files = Files.list(volume)) {
            return files.filter(f -> f.getFileName().toString().endsWith(".kvix"))
                    .mapToLong(f -> f.toFile().lastModified())
                    .max()
                    .orElse(0);
        }
    }

    private static void deleteVolumes() throws IOException {
        Path root = LoopbackCluster.volume(NS, "x").getParent();
        if (Files.exists(root)) {
            try (Stream<Path> all = Files.walk(root)) {
                all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    @Test
    void everyReplicaRestartedAtOnceComesBackWithItsIndexFromItsOwnVolume() throws Exception {
        deleteVolumes();
        int port = LoopbackCluster.freePort(LoopbackCluster.replicaIps(2));
        int zmqPort = LoopbackCluster.freePort(LoopbackCluster.engineIps(1));
        int replayPort = LoopbackCluster.freePort(LoopbackCluster.engineIps(1));
        try (LoopbackCluster cluster = new LoopbackCluster(harness)) {
            KvIndexer wanted = Resources.kvIndexer(NS, "kv", 2, port);
            wanted.getSpec().setPersistence(new Persistence(new Quantity("1Gi"), "fast-ssd", 1));
            harness.create(wanted);

            // the StatefulSet: one claim per replica, mounted where the indexer keeps its snapshots
            await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
                StatefulSet sts = harness.statefulSet(NS, "kv");
                PersistentVolumeClaim claim =
                        sts.getSpec().getVolumeClaimTemplates().getFirst();
                assertThat(claim.getMetadata().getName()).isEqualTo("state");
                assertThat(claim.getSpec().getResources().getRequests()).containsEntry("storage", new Quantity("1Gi"));
                assertThat(claim.getSpec().getStorageClassName()).isEqualTo("fast-ssd");
                assertThat(claim.getSpec().getAccessModes()).containsExactly("ReadWriteOnce");
                Container c =
                        sts.getSpec().getTemplate().getSpec().getContainers().getFirst();
                assertThat(c.getVolumeMounts())
                        .anySatisfy(m -> assertThat(m.getName() + ":" + m.getMountPath())
                                .isEqualTo("state:/var/lib/kv-indexer"));
                assertThat(c.getArgs())
                        .containsSubsequence("--snapshot-dir", "/var/lib/kv-indexer", "--snapshot-interval", "1s");
            });
            KvIndexer kvi = harness.kvIndexer(NS, "kv");
            cluster.startReplica(NS, "kv", 0);
            cluster.startReplica(NS, "kv", 1);
            EngineSimulator engine = cluster.startEngine(NS, "vllm-a", VLLM, 0, zmqPort, replayPort);
            harness.create(Resources.kvWorker(NS, "vllm", "kv", VLLM, "llama", BLOCK, zmqPort, replayPort, 1));
            await().atMost(WAIT).until(() -> engine.subscriptions() >= 2);
            long id = InstanceIds.hashOf(NS, "vllm-a");
            int[] prompt = tokens(16, 500);
            engine.storeSequence(prompt, BLOCK).get();
            for (int r = 0; r < 2; r++) {
                IndexerEndpoint replica = cluster.replica(kvi, r);
                await().atMost(WAIT).until(() -> matched(cluster, replica, prompt, id) == 16);
            }
            // a snapshot taken after the blocks arrived, in each replica's own volume
            long stored = System.currentTimeMillis();
            for (int r = 0; r < 2; r++) {
                Path volume = LoopbackCluster.volume(NS, "kv-" + r);
                await().atMost(WAIT).until(() -> newestSnapshot(volume) > stored + 1_000);
            }

            // every replica goes at once (a namespace-wide restart); the engine keeps publishing meanwhile
            for (int r = 0; r < 2; r++) {
                cluster.killReplica(NS, "kv", r);
                harness.replicaPod(kvi, r, LoopbackCluster.replicaIp(r), false);
            }
            int[] meanwhile = tokens(8, 700);
            engine.storeSequence(meanwhile, BLOCK).get();

            // each comes back alone, from its own volume: its registrations and blocks at its first /ready
            for (int r = 0; r < 2; r++) {
                cluster.startReplicaAlone(NS, "kv", r);
                IndexerEndpoint replica = cluster.replica(kvi, r);
                assertThat(cluster.registrations(replica, "llama"))
                        .as("replica %d registrations at its first /ready", r)
                        .containsKey(id);
                assertThat(matched(cluster, replica, prompt, id))
                        .as("replica %d blocks at its first /ready", r)
                        .isEqualTo(16);
            }
            // and what it missed while down is replayed from the engine (the next batch shows the gap)
            int[] after = tokens(8, 900);
            engine.storeSequence(after, BLOCK).get();
            for (int r = 0; r < 2; r++) {
                IndexerEndpoint replica = cluster.replica(kvi, r);
                await().atMost(WAIT)
                        .until(() -> matched(cluster, replica, meanwhile, id) == 8
                                && matched(cluster, replica, after, id) == 8);
            }
            harness.deleteKvWorkers(NS, WAIT);
        } finally {
            deleteVolumes();
        }
    }
}

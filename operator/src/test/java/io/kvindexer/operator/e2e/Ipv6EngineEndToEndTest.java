package io.kvindexer.operator.e2e;

import static io.kvindexer.operator.support.OperatorHarness.WAIT;
import static io.kvindexer.operator.support.Resources.VLLM;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.operator.client.IndexerEndpoint;
import io.kvindexer.operator.client.RegisteredWorker;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerStatus.PodRegistration;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import io.kvindexer.operator.worker.InstanceIds;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An engine pod whose IP is IPv6 ({@code ::1}, as on a dual-stack or IPv6-only cluster): the operator registers
 * it as {@code tcp://[::1]:port} with the replay endpoint bracketed the same way, and its blocks reach the replica.
 */
class Ipv6EngineEndToEndTest {
    @RegisterExtension
    static final OperatorHarness harness = OperatorHarness.onMockApiServer(Duration.ofSeconds(2));

    private LoopbackCluster cluster;
    private String ns;

    /** Deletes the KvWorker while the replica still answers (its finalizer unregisters the engine), then stops it. */
    @AfterEach
    void tearDown() {
        try {
            harness.deleteKvWorkers(ns, WAIT);
        } finally {
            cluster.close();
        }
    }

    private static int freeV6Port() throws IOException {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(InetAddress.getByName("::1"), 0));
            return s.getLocalPort();
        }
    }

    /**
     * One replica on 127.0.0.2 and one engine pod at ::1; with {@code engine} a real simulator bound there (the
     * simulator's IPv6 binding is part of the ingest issue too).
     */
    private EngineSimulator setUp(String ns, int zmqPort, int replayPort, boolean engine) throws Exception {
        this.ns = ns;
        cluster = new LoopbackCluster(harness);
        cluster.startIndexer(ns, "kv", 1, LoopbackCluster.freePort(LoopbackCluster.replicaIp(0)));
        EngineSimulator sim = null;
        if (engine) {
            sim = EngineSimulator.start(EngineSimulator.Options.builder()
                    .endpoint("tcp://[::1]:" + zmqPort)
                    .replayEndpoint("tcp://[::1]:" + replayPort)
                    .build());
            cluster.adoptEngine(ns, "vllm-v6", sim);
        }
        harness.startEnginePod(ns, "vllm-v6", VLLM, "::1", true);
        harness.create(Resources.kvWorker(ns, "vllm", "kv", VLLM, "llama", 4, zmqPort, replayPort, 1));
        return sim;
    }

    @Test
    void anIpv6EnginePodIsRegisteredWithBracketedEndpoints() throws Exception {
        String ns = "ipv6-register";
        int zmqPort = freeV6Port();
        int replayPort = freeV6Port();
        setUp(ns, zmqPort, replayPort, false);
        KvIndexer kvi = cluster.kvIndexer(ns, "kv");
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            assertThat(cluster.http.workers(cluster.replica(kvi, 0), "llama", "default"))
                    .singleElement()
                    .satisfies(w -> {
                        assertThat(w.instanceId()).isEqualTo(InstanceIds.hashOf(ns, "vllm-v6"));
                        assertThat(w.endpoints()).containsEntry(0, "tcp://[::1]:" + zmqPort);
                    });
            PodRegistration p = harness.kvWorker(ns, "vllm").getStatus().pods().getFirst();
            assertThat(p.endpoint()).isEqualTo("tcp://[::1]:" + zmqPort);
            assertThat(p.replayEndpoint()).isEqualTo("tcp://[::1]:" + replayPort);
            assertThat(p.registeredOn()).containsExactly("kv-0");
        });
    }

    /** Needs the simulator to bind and the indexer's listener to connect to IPv6 endpoints (the ingest issue). */
    @Test
    void blocksFromAnIpv6EngineReachTheReplica() throws Exception {
        String ns = "ipv6-blocks";
        EngineSimulator sim = setUp(ns, freeV6Port(), freeV6Port(), true);
        KvIndexer kvi = cluster.kvIndexer(ns, "kv");
        await().atMost(WAIT).until(() -> sim.subscriptions() >= 1);
        int[] prompt = IntStream.rangeClosed(1, 8).toArray();
        sim.storeSequence(prompt, 4).get();
        IndexerEndpoint replica = cluster.replica(kvi, 0);
        long id = InstanceIds.hashOf(ns, "vllm-v6");
        await().atMost(WAIT).ignoreExceptions().until(() -> cluster.matched(replica, "llama", prompt, id) == 8);
        assertThat(cluster.http.workers(replica))
                .extracting(RegisteredWorker::instanceId)
                .containsExactly(id);
    }
}

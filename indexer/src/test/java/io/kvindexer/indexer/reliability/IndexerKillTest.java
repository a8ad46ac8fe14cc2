package io.kvindexer.indexer.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.IndexerProcess;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.indexer.sim.PrefixCacheEngine;
import io.kvindexer.indexer.sim.SimEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * An indexer replica in a child JVM is killed with SIGKILL under sustained load and restarted with
 * {@code --peers} pointing at the surviving replica: its {@code /dump} must equal the survivor's (and the engines'
 * ground truth) within a bounded time, and no {@code /query} may be answered while it is still recovering.
 */
class IndexerKillTest {

    private static final int ENGINES = 4;
    private static final int BLOCK = FaultHarness.BLOCK;
    /** Block events per second aimed at, over all engines (each request: 32 removes + 32 stores once warm). */
    private static final int TARGET_RATE = 60_000;

    /** A replica in a child JVM on an ephemeral port of the loopback. */
    private static IndexerProcess startChild(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("--port", "0", "--host", "127.0.0.1"));
        cmd.addAll(List.of(args));
        return IndexerProcess.start(List.of("-Xmx512m"), cmd.toArray(String[]::new));
    }

    private static void kill(IndexerProcess child) throws InterruptedException {
        assertThat(child.kill()).isTrue();
    }

    private static void register(HttpTestClient http, long id, EngineSimulator sim) {
        HttpTestClient.Response r = http.post(
                "/register",
                "{\"instance_id\":" + id + ",\"endpoint\":\""
                        + sim.endpoint() + "\",\"replay_endpoint\":\"" + sim.replayEndpoint() + "\",\"model_name\":\""
                        + FaultHarness.MODEL + "\",\"block_size\":" + BLOCK + "}");
        assertThat(r.status()).as(r.body()).isEqualTo(201);
    }

    @Test
    void killedReplicaRecoversFromItsPeerAndNeverAnswersFromAnIncompleteTree() throws Exception {
        long loadMillis = ReliabilityReport.scaled(6_000, 20);
        List<EngineSimulator> sims = new ArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong blockEvents = new AtomicLong();
        AtomicLong batches = new AtomicLong();
        List<Thread> load = new ArrayList<>();
        IndexerProcess victim = null;
        try (IndexerApp survivor = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient a = new HttpTestClient(survivor.baseUrl())) {
            victim = startChild();
            HttpTestClient b = new HttpTestClient(victim.url());
            for (int i = 1; i <= ENGINES; i++) {
                EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults());
                sims.add(sim);
                register(a, i, sim);
                register(b, i, sim);
            }
            for (EngineSimulator sim : sims) {
                await().atMost(Duration.ofSeconds(60)).until(() -> sim.subscriptions() >= 2);
            }
            long loadStart = System.nanoTime();
            for (int i = 0; i < ENGINES; i++) {
                EngineSimulator sim = sims.get(i);
                int engine = i;
                load.add(Thread.ofPlatform().name("load-" + i).start(() -> {
                    PrefixCacheEngine cache = new PrefixCacheEngine(2_000, BLOCK);
                    Random random = new Random(engine);
                    long perEngine = TARGET_RATE / ENGINES;
                    long sent = 0;
                    long t0 = System.nanoTime();
                    while (!stop.get()) {
                        int[] tokens = new int[32 * BLOCK];
                        int base = random.nextInt();
                        for (int t = 0; t < tokens.length; t++) {
                            tokens[t] = base + t;
                        }
                        List<SimEvent> events = cache.serve(tokens).events();
                        for (SimEvent e : events) {
                            sent += e instanceof SimEvent.Stored s
                                    ? s.hashes().length
                                    : e instanceof SimEvent.Removed r ? r.hashes().length : 0;
                        }
                        sim.publish(events);
                        batches.incrementAndGet();
                        long due = t0 + sent * 1_000_000_000L / perEngine; // pace to the target rate
                        long wait = due - System.nanoTime();
                        if (wait > 0) {
                            LockSupport.parkNanos(wait);
                        }
                    }
                    blockEvents.addAndGet(sent);
                }));
            }
            // let the load run, then SIGKILL the victim mid-stream
            await().pollDelay(Duration.ofMillis(loadMillis / 3))
                    .atMost(Duration.ofMinutes(5))
                    .until(() -> true);
            kill(victim);
            b.close();
            long restartAt = System.nanoTime();
            victim = startChild("--peers", survivor.baseUrl());
            String restartedUrl = victim.url();
            HttpTestClient b2 = new HttpTestClient(restartedUrl);
            // the operator re-registers the engines on the new pod; /query must stay 503 until recovery is done
            AtomicInteger answeredWhileRecovering = new AtomicInteger();
            AtomicInteger refusedWhileRecovering = new AtomicInteger();
            AtomicBoolean pollStop = new AtomicBoolean();
            String q = "{\"model_name\":\"m\",\"token_ids\":[" + "1,".repeat(BLOCK - 1) + "1]}";
            Thread poller = Thread.ofPlatform().start(() -> {
                try (HttpTestClient p = new HttpTestClient(restartedUrl)) {
                    while (!pollStop.get()) {
                        int queryStatus = p.post("/query", q).status();
                        String reason = p.get("/ready").json().path("reason").asText();
                        if (reason.equals("recovering_from_peer")) {
                            if (queryStatus == 200) {
                                answeredWhileRecovering.incrementAndGet();
                            } else if (queryStatus == 503) {
                                refusedWhileRecovering.incrementAndGet();
                            }
                        }
                    }
                }
            });
            for (int i = 1; i <= ENGINES; i++) {
                // as the operator's sync: a registration the replica recovered from its peer is already there (409)
                int status = b2.post(
                                "/register",
                                "{\"instance_id\":" + i + ",\"endpoint\":\""
                                        + sims.get(i - 1).endpoint()
                                        + "\",\"replay_endpoint\":\""
                                        + sims.get(i - 1).replayEndpoint()
                                        + "\",\"model_name\":\"" + FaultHarness.MODEL + "\",\"block_size\":" + BLOCK
                                        + "}")
                        .status();
                assertThat(status).isIn(201, 409);
            }
            await().atMost(Duration.ofMinutes(2)).until(() -> b2.get("/ready").status() == 200);
            long readyMs = (System.nanoTime() - restartAt) / 1_000_000;
            pollStop.set(true);
            poller.join();
            await().pollDelay(Duration.ofMillis(loadMillis * 2 / 3))
                    .atMost(Duration.ofMinutes(5))
                    .until(() -> true);
            stop.set(true);
            for (Thread t : load) {
                t.join();
            }
            double loadSeconds = (System.nanoTime() - loadStart) / 1e9;
            long stopAt = System.nanoTime();
            // after the load stops: both replicas hold exactly what the engines hold
            FaultHarness truth = new FaultHarness(survivor.baseUrl());
            List<FaultHarness.Engine> engines = new ArrayList<>();
            for (int i = 0; i < ENGINES; i++) {
                engines.add(truth.new Engine(i + 1, sims.get(i), 2_000, i));
            }
            truth.engines.addAll(engines);
            await().atMost(Duration.ofMinutes(2))
                    .pollInterval(Duration.ofMillis(200))
                    .untilAsserted(() -> {
                        var expected = truth.groundTruth();
                        assertThat(FaultHarness.dumpMemberships(a)).isEqualTo(expected);
                        assertThat(FaultHarness.dumpMemberships(b2)).isEqualTo(expected);
                    });
            long convergeMs = (System.nanoTime() - stopAt) / 1_000_000;
            assertThat(answeredWhileRecovering.get()).isZero();
            assertThat(refusedWhileRecovering.get()).isPositive(); // the gate was really exercised
            var expected = truth.groundTruth();
            double rate = blockEvents.get() / loadSeconds;
            System.out.printf(
                    "kill -9 under load: %.0f block events/s over %.1f s, ready %d ms after restart%n",
                    rate, loadSeconds, readyMs);
            ReliabilityReport.record(
                    new ReliabilityReport.Row(
                            "indexer-kill-9",
                            "replica process SIGKILLed under load, restarted with --peers",
                            ENGINES + " engines, " + Math.round(rate) + " block events/s for " + Math.round(loadSeconds)
                                    + " s",
                            batches.get(),
                            batches.get(),
                            -1,
                            expected.size(),
                            FaultHarness.dumpMemberships(b2).size(),
                            FaultHarness.symmetricDifference(expected, FaultHarness.dumpMemberships(b2)),
                            convergeMs,
                            "ready " + readyMs + " ms after restart; " + refusedWhileRecovering.get()
                                    + " /query refused 503 while recovering, 0 answered; restarted /dump = survivor's = truth"));
            b2.close();
        } finally {
            stop.set(true);
            for (Thread t : load) {
                t.join();
            }
            if (victim != null) {
                kill(victim);
            }
            sims.forEach(EngineSimulator::close);
        }
    }
}

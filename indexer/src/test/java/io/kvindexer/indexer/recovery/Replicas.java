package io.kvindexer.indexer.recovery;

import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A replica that recovers from peers at start: its configuration, waiting until its recovery is over, and the one
 * sequence the peer-discovery tests seed their first replica with and then look for.
 */
final class Replicas {

    /** The seeded sequence: two blocks of 4 tokens of instance 1, rank 0, model {@code m}. */
    static final int[] TOKENS = {1, 2, 3, 4, 5, 6, 7, 8};

    private static final String QUERY = "{\"model_name\":\"m\",\"token_ids\":[1,2,3,4,5,6,7,8]}";

    private Replicas() {}

    /** Registers {@code engine} on {@code replica} as instance 1 and stores {@link #TOKENS}; waits until it counts. */
    static void seed(HttpTestClient replica, EngineSimulator engine) throws Exception {
        replica.post(
                        "/register",
                        "{\"instance_id\":1,\"endpoint\":\"" + engine.endpoint()
                                + "\",\"model_name\":\"m\",\"block_size\":4}")
                .assertStatus(201);
        await().atMost(Duration.ofSeconds(30)).until(() -> engine.subscriptions() >= 1);
        engine.storeSequence(TOKENS, 4).get(30, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(30)).until(() -> score(replica) == 8);
    }

    /** The tokens of {@link #TOKENS} that instance 1 holds, as the replica's {@code /query} answers. */
    static int score(HttpTestClient replica) {
        return replica.post("/query", QUERY).json().at("/scores/1/0").asInt();
    }

    /** The defaults, recovering from {@code peers} (tried in order) once {@code delay} has passed. */
    static IndexerConfig recoveringFrom(Duration delay, String... peers) {
        return IndexerConfig.defaults().with(c -> {
            c.peers = List.of(peers);
            c.recoveryDelay = delay;
        });
    }

    /** Waits, at most a minute, for {@code /ready} to answer 200: recovery (from a peer or not) is over. */
    static void awaitReady(HttpTestClient replica) {
        await().atMost(Duration.ofSeconds(60)).until(() -> replica.get("/ready").status() == 200);
    }
}

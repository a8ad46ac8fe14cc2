package io.kvindexer.indexer.ingest;

import io.kvindexer.indexer.sim.EngineSimulator;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/** Test barrier: the publisher has counted a listener's subscription, so every later batch reaches it. */
final class Subscriptions {

    private Subscriptions() {}

    /** {@link #await} the listener's one subscription, then its {@link ListenerStatus#ACTIVE} within {@code atMost}. */
    static void awaitActive(EngineListener listener, EngineSimulator sim, Duration atMost) {
        await(listener, sim, 1);
        Awaitility.await().atMost(atMost).until(() -> listener.status() == ListenerStatus.ACTIVE);
    }

    /**
     * jeromq 0.6.0 now and then leaves an outgoing connection stalled for good (see bench/JeromqHandshakeBench); a
     * listener not counted within 10 s gets a fresh socket through pause/resume, as an operator would do.
     */
    static void await(EngineListener listener, EngineSimulator sim, int subscriptions) {
        for (int attempt = 1; ; attempt++) {
            try {
                Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> sim.subscriptions() >= subscriptions);
                return;
            } catch (ConditionTimeoutException e) {
                if (attempt == 5) {
                    throw e;
                }
                listener.pause();
                listener.resume();
            }
        }
    }
}

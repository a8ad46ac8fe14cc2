package io.kvindexer.operator;

import io.kvindexer.logging.ShutdownLogManager;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operator's one shutdown path: steps run in the order given, on one thread, each to its end before the next
 * starts (the operator stops, then the probes, then the Kubernetes client its informers and reconciles still use).
 * JVM shutdown hooks run concurrently, so every step lives in this single hook, never in hooks of its own. A step
 * that fails is logged and the next still runs: a half-stopped operator must still let go of its client. Installed,
 * it holds JUL's own shutdown hook back until its last line is printed ({@link ShutdownLogManager}).
 */
final class ShutdownSequence implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(ShutdownSequence.class);

    /** One named step. */
    record Step(String name, AutoCloseable action) {}

    private final List<Step> steps = new ArrayList<>();

    ShutdownSequence then(String name, AutoCloseable action) {
        steps.add(new Step(name, action));
        return this;
    }

    @Override
    public void run() {
        long start = System.nanoTime();
        try {
            for (Step step : steps) {
                try {
                    step.action().close();
                } catch (Exception | LinkageError e) {
                    LOG.atWarn()
                            .addKeyValue("step", step.name())
                            .addKeyValue("error", String.valueOf(e))
                            .log("shutdown step failed; continuing with the next");
                }
            }
            LOG.atInfo()
                    .addKeyValue("millis", (System.nanoTime() - start) / 1_000_000)
                    .log("kv-indexer-operator stopped");
        } finally {
            ShutdownLogManager.shutdownDone(); // what the steps logged is printed by now
        }
    }

    /** Installs this sequence as the process's (one) shutdown hook. */
    Thread install() {
        Thread hook = new Thread(this, "kv-indexer-operator-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        ShutdownLogManager.awaitShutdown(); // only once the hook is in: JUL's own must never wait for nothing
        return hook;
    }
}

package io.kvindexer.logging;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.logging.LogManager;

/**
 * JUL's log manager in the indexer's and the operator's processes, so that what a shutdown logs gets printed. JUL
 * resets its loggers, closing the console handler, from a shutdown hook of its own that runs beside the process's:
 * the listeners stopped, a last snapshot or a shutdown step that failed, were logged into a closed handler and lost.
 * When JUL's hook calls this manager's reset, it first waits until the process's shutdown has finished (30 s at
 * most, Kubernetes' default grace period).
 *
 * <p>Use: {@link Install#now()} first thing in {@code main}; {@link #awaitShutdown()} once the process's shutdown
 * hook is installed; {@link #shutdownDone()} at the end of that hook.
 */
public final class ShutdownLogManager extends LogManager {

    /** the thread JUL's shutdown hook runs on */
    private static final String JUL_HOOK = "java.util.logging.LogManager$Cleaner";

    private static final long LONGEST_SECONDS = 30;
    private static final CountDownLatch DONE = new CountDownLatch(1);
    private static volatile boolean awaited;

    /**
     * Makes this the process's log manager; first thing in {@code main}, before anything logs. Not a static method
     * of this class: calling one initialises {@link LogManager} first, which then picks its manager without us.
     */
    public static final class Install {
        private Install() {}

        public static void now() {
            if (System.getProperty("java.util.logging.manager") == null) {
                System.setProperty("java.util.logging.manager", ShutdownLogManager.class.getName());
            }
        }
    }

    /** From now on JUL's shutdown hook waits for {@link #shutdownDone()} (called once the process's hook is in). */
    public static void awaitShutdown() {
        awaited = true;
    }

    public static void shutdownDone() {
        DONE.countDown();
    }

    @Override
    public void reset() {
        if (awaited && Thread.currentThread().getClass().getName().equals(JUL_HOOK)) {
            try {
                DONE.await(LONGEST_SECONDS, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        super.reset();
    }
}

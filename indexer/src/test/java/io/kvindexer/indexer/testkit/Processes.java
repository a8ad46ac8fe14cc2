package io.kvindexer.indexer.testkit;

import java.util.concurrent.TimeUnit;

/** Stopping a child process the way the tests of every module do. */
public final class Processes {

    private Processes() {}

    /** SIGTERM, then SIGKILL after 30 s; an interrupted wait kills at once and keeps the interrupt. */
    public static void stop(Process process) {
        process.destroy();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(30, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}

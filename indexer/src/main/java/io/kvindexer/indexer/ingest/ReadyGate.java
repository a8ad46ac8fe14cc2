package io.kvindexer.indexer.ingest;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The startup gate: listeners connect at once but start draining only when it opens (after peer recovery
 * and the {@code DYN_ROUTER_MIN_INITIAL_WORKERS} wait), so a recovered dump never overtakes live events.
 */
public final class ReadyGate {

    private final CountDownLatch opened = new CountDownLatch(1);

    public static ReadyGate open() {
        ReadyGate gate = new ReadyGate();
        gate.openGate();
        return gate;
    }

    public void openGate() {
        opened.countDown();
    }

    public boolean isOpen() {
        return opened.getCount() == 0;
    }

    /** Waits up to {@code millis}; true when open. */
    public boolean await(long millis) throws InterruptedException {
        return opened.await(millis, TimeUnit.MILLISECONDS);
    }
}

package io.kvindexer.bench;

import java.lang.management.ManagementFactory;

/** Used heap after full collections: the before/after difference divided by memberships gives bytes per membership. */
public final class HeapMeter {

    private HeapMeter() {}

    /** Used heap bytes after three {@code System.gc()} calls (a full, stop-the-world collection with G1). */
    public static long usedAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}

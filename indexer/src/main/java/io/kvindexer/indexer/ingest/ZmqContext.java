package io.kvindexer.indexer.ingest;

import java.lang.management.ManagementFactory;
import org.zeromq.ZContext;

/**
 * The one ZeroMQ context of the process, shared by all listeners (a context owns I/O threads; one is plenty
 * for many sockets). Created on first use with room for {@link #DEFAULT_MAX_SOCKETS} sockets, or what
 * {@link #reserve} asked for before (jeromq's own default of 1,024 would cap the listeners at about that many, and a
 * context's socket table is sized when its first socket is made). Closed by {@link #closeShared()} at shutdown.
 */
public final class ZmqContext {

    /** Sockets the shared context allows unless {@link #reserve} asked for more first. */
    public static final int DEFAULT_MAX_SOCKETS = 8_192;
    /** Open files a listener costs while idle: its SUB socket's mailbox (a pipe) and the TCP connection. */
    public static final int FILES_PER_LISTENER = 3;
    /** Open files kept for everything else (HTTP connections, jars, selectors, replays). */
    private static final int FILES_KEPT = 1_024;

    private static ZContext shared;
    private static int maxSockets = DEFAULT_MAX_SOCKETS;

    private ZmqContext() {}

    public static synchronized ZContext shared() {
        if (shared == null || shared.isClosed()) {
            shared = new ZContext(1);
            shared.setLinger(0);
            shared.getContext().setMaxSockets(maxSockets);
        }
        return shared;
    }

    /**
     * Asks for room for {@code sockets} sockets; takes effect when the shared context is made (at once when it does
     * not exist yet). Returns the sockets the shared context will allow.
     */
    public static synchronized int reserve(int sockets) {
        if (shared == null || shared.isClosed()) {
            maxSockets = Math.max(maxSockets, sockets);
        }
        return maxSockets;
    }

    /** How many listeners this process can hold: the context's sockets and the open-file limit, less a reserve. */
    public static synchronized int listenerCapacity(int reservedSockets) {
        int bySockets = Math.max(0, maxSockets - reservedSockets);
        long files = openFileLimit();
        int byFiles = files <= 0 ? Integer.MAX_VALUE : (int) Math.max(0, (files - FILES_KEPT) / FILES_PER_LISTENER);
        return Math.min(bySockets, byFiles);
    }

    /** The process's open-file limit; 0 when the platform does not say. */
    public static long openFileLimit() {
        return ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean u
                ? u.getMaxFileDescriptorCount()
                : 0;
    }

    public static synchronized void closeShared() {
        if (shared != null) {
            shared.close();
            shared = null;
        }
    }
}

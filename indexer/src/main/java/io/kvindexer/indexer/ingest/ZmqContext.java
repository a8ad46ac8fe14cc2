package io.kvindexer.indexer.ingest;

import java.lang.management.ManagementFactory;
import org.zeromq.ZContext;

/**
 * The one ZeroMQ context of the process (a context owns I/O threads; one is plenty for many sockets). The listeners'
 * SUB connections are not jeromq sockets ({@link Subscriber} speaks ZMTP itself); the context holds the replay
 * DEALERs (one per running replay) and the simulators' sockets in tests. Created on first use with room for
 * {@link #DEFAULT_MAX_SOCKETS} sockets, or what {@link #reserve} asked for before (a context's socket table is sized
 * when its first socket is made). Closed by {@link #closeShared()} at shutdown. Also says how many listeners the
 * process can hold: its open-file limit.
 */
public final class ZmqContext {

    /** Sockets the shared context allows unless {@link #reserve} asked for more first. */
    public static final int DEFAULT_MAX_SOCKETS = 8_192;
    /**
     * Open files a listener costs while idle, as measured (FleetBench): its TCP connection, registered on a poller's
     * shared selector. (A jeromq SUB cost 5: its mailbox is a pipe and a selector of its own.)
     */
    public static final int FILES_PER_LISTENER = 1;
    /**
     * Open files kept for everything else: HTTP connections, jars, the pollers' selectors, and running replays (a
     * replay DEALER is a jeromq socket: 5 while it runs).
     */
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

    /** How many listeners this process can hold: the open-file limit, less a reserve. */
    public static int listenerCapacity() {
        long files = openFileLimit();
        return files <= 0
                ? Integer.MAX_VALUE
                : (int) Math.min(Integer.MAX_VALUE, Math.max(0, (files - FILES_KEPT) / FILES_PER_LISTENER));
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

package io.kvindexer.indexer.ingest;

import org.zeromq.ZContext;

/**
 * The one ZeroMQ context of the process, shared by all listeners (a context owns I/O threads; one is plenty
 * for many sockets). Created on first use; closed by {@link #closeShared()} at shutdown.
 */
public final class ZmqContext {

    private static ZContext shared;

    private ZmqContext() {}

    public static synchronized ZContext shared() {
        if (shared == null || shared.isClosed()) {
            shared = new ZContext(1);
            shared.setLinger(0);
        }
        return shared;
    }

    public static synchronized void closeShared() {
        if (shared != null) {
            shared.close();
            shared = null;
        }
    }
}

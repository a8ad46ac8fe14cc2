package io.kvindexer.indexer.ingest;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.concurrent.CompletableFuture;

/**
 * How an engine's host name becomes an address. A lookup runs on a virtual thread of its own, never on a poller: a
 * slow DNS answer (seconds, when a server times out) would hold every engine that poller serves. A test's seam: a
 * lookup that blocks.
 */
@FunctionalInterface
interface HostLookup {

    /** The system's resolver (hosts file, then DNS), as {@link InetAddress#getByName} asks it. */
    HostLookup SYSTEM = InetAddress::getByName;

    /** Blocks until {@code host} is looked up. */
    InetAddress byName(String host) throws UnknownHostException;

    /** Looks {@code host} up on a virtual thread, then runs {@code done} (which wakes the poller). */
    default CompletableFuture<InetAddress> start(String host, Runnable done) {
        CompletableFuture<InetAddress> result = new CompletableFuture<>();
        Thread.ofVirtual().name("kv-ingest-lookup").start(() -> {
            try {
                result.complete(byName(host));
            } catch (UnknownHostException | RuntimeException e) {
                result.completeExceptionally(e);
            }
            done.run();
        });
        return result;
    }
}

package io.kvindexer.indexer.http;

import java.io.IOException;
import java.io.OutputStream;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.locks.LockSupport;

/**
 * What a {@code /dump} may hold of the process: at most {@code max} stream at once (each may keep up to
 * {@link ChunkPipe#LIMIT} waiting for its client), and one whose client accepts no bytes for {@code stallTimeout}
 * is abandoned. A client that stops reading would otherwise keep its slot and that memory for as long as TCP keeps
 * the connection open, which is for good while the client's kernel still acknowledges.
 */
final class DumpSlots {

    private static final System.Logger LOG = System.getLogger(DumpSlots.class.getName());

    private final Semaphore slots;
    private final int max;
    private final Duration stallTimeout;

    DumpSlots(int max, Duration stallTimeout) {
        this.slots = new Semaphore(max);
        this.max = max;
        this.stallTimeout = stallTimeout;
    }

    int max() {
        return max;
    }

    /** A slot for the calling thread's dump, or null when every slot is taken. */
    Slot tryTake(String client) {
        return slots.tryAcquire() ? new Slot(client) : null;
    }

    /**
     * One dump's slot: {@link #watch} wraps the response's stream so that a write (or flush) blocked longer than
     * the stall timeout gets the writing thread interrupted, which closes the socket (Helidon serves a connection on
     * a virtual thread, whose blocking socket I/O an interrupt ends by closing the socket). Closing the slot gives
     * it back.
     */
    final class Slot implements AutoCloseable {
        private final Thread writer = Thread.currentThread();
        private final String client;
        private final Thread watcher;
        /** when the write under way began ({@link System#nanoTime}), 0 when none is */
        private volatile long writingSince;

        private volatile boolean abandoned;
        private volatile boolean closed;

        private Slot(String client) {
            this.client = client;
            this.watcher = Thread.ofVirtual().name("dump-stall-watch").start(this::watch);
        }

        /** True once the client was given up on: the dump's failure is that, not a bug. */
        boolean abandoned() {
            return abandoned;
        }

        OutputStream watch(OutputStream out) {
            return new OutputStream() {
                @Override
                public void write(int b) throws IOException {
                    begin();
                    try {
                        out.write(b);
                    } finally {
                        writingSince = 0;
                    }
                }

                @Override
                public void write(byte[] b, int off, int len) throws IOException {
                    begin();
                    try {
                        out.write(b, off, len);
                    } finally {
                        writingSince = 0;
                    }
                }

                @Override
                public void flush() throws IOException {
                    begin();
                    try {
                        out.flush();
                    } finally {
                        writingSince = 0;
                    }
                }

                @Override
                public void close() throws IOException {
                    begin();
                    try {
                        out.close();
                    } finally {
                        writingSince = 0;
                    }
                }
            };
        }

        private void begin() {
            writingSince = System.nanoTime() | 1; // never 0
        }

        /** Wakes a few times per timeout; a write blocked past it has its thread interrupted, once. */
        private void watch() {
            long limit = stallTimeout.toNanos();
            long period = Math.clamp(
                    limit / 4,
                    Duration.ofMillis(10).toNanos(),
                    Duration.ofSeconds(1).toNanos());
            while (!closed) {
                LockSupport.parkNanos(period);
                long since = writingSince;
                if (since != 0 && System.nanoTime() - since > limit && giveUp()) {
                    LOG.log(
                            System.Logger.Level.WARNING,
                            "/dump to {0} abandoned: the client accepted no bytes for {1} ms"
                                    + " (--dump-stall-timeout-ms); its connection is closed",
                            client,
                            stallTimeout.toMillis());
                    return;
                }
            }
        }

        private synchronized boolean giveUp() {
            if (closed) {
                return false;
            }
            abandoned = true;
            writer.interrupt();
            return true;
        }

        /** Gives the slot back; clears an interrupt the watcher sent, which was for the stalled write only. */
        @Override
        public void close() {
            synchronized (this) {
                closed = true;
                if (abandoned) {
                    Thread.interrupted();
                }
            }
            LockSupport.unpark(watcher);
            slots.release();
        }
    }
}

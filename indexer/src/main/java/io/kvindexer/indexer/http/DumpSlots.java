package io.kvindexer.indexer.http;

import io.kvindexer.indexer.common.Watchdog;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Duration;
import java.util.concurrent.Semaphore;

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
     * the stall timeout gets the writing thread interrupted by the {@link Watchdog}, which closes the socket (Helidon
     * serves a connection on a virtual thread, whose blocking socket I/O an interrupt ends by closing the socket).
     * Closing the slot gives it back.
     */
    final class Slot extends Watchdog.Deadline implements AutoCloseable {
        private final Thread writer = Thread.currentThread();
        private final String client;

        private volatile boolean abandoned;
        private boolean closed; // guarded by this

        private Slot(String client) {
            this.client = client;
        }

        /** True once the client was given up on: the dump's failure is that, not a bug. */
        boolean abandoned() {
            return abandoned;
        }

        OutputStream watch(OutputStream out) {
            return new OutputStream() {
                @Override
                public void write(int b) throws IOException {
                    timed(() -> out.write(b));
                }

                @Override
                public void write(byte[] b, int off, int len) throws IOException {
                    timed(() -> out.write(b, off, len));
                }

                @Override
                public void flush() throws IOException {
                    timed(out::flush);
                }

                @Override
                public void close() throws IOException {
                    timed(out::close);
                }
            };
        }

        /** One write to the client, bounded by the stall timeout. */
        private void timed(Write write) throws IOException {
            armIn(stallTimeout);
            try {
                write.run();
            } finally {
                cancel();
            }
        }

        /** A write blocked past the stall timeout: its thread is interrupted, once. */
        @Override
        protected synchronized void expired(long now) {
            if (!due(now)) {
                return; // the write ended meanwhile
            }
            cancel();
            if (closed || abandoned) {
                return;
            }
            abandoned = true;
            writer.interrupt();
            Thread.ofVirtual() // not on the watchdog's thread: a log write may block
                    .name("dump-stall-log")
                    .start(() -> LOG.log(
                            System.Logger.Level.WARNING,
                            "/dump to {0} abandoned: the client accepted no bytes for {1} ms"
                                    + " (--dump-stall-timeout-ms); its connection is closed",
                            client,
                            stallTimeout.toMillis()));
        }

        /** Gives the slot back; clears an interrupt the watchdog sent, which was for the stalled write only. */
        @Override
        public void close() {
            synchronized (this) {
                closed = true;
                retire();
                if (abandoned) {
                    Thread.interrupted();
                }
            }
            slots.release();
        }
    }

    /** A write to the client's stream. */
    @FunctionalInterface
    private interface Write {
        void run() throws IOException;
    }
}

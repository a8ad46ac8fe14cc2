package io.kvindexer.indexer.http;

import java.io.IOException;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * Hands bytes from a producer thread to the thread that owns the response, in chunks: a write never blocks (the
 * producer may hold an index's read lock, which the writers need), the consumer streams while the producer is still
 * encoding, and the producer waits in {@link #awaitRoom}, where it holds no lock, while more than {@code limit}
 * bytes wait for a slow client. So what waits is at most the limit plus what one chunk of the index walk writes,
 * not the whole payload.
 */
final class ChunkPipe extends OutputStream {

    private static final int CHUNK = 256 * 1024;
    private static final byte[] END = new byte[0];
    /** bytes that may wait for the client before the producer waits: a few tens of ms of a fast network */
    static final long LIMIT = 16L * 1024 * 1024;

    private final LinkedBlockingQueue<byte[]> chunks = new LinkedBlockingQueue<>();
    private final long limit;
    /** bytes handed to the queue and not yet written to the client; guarded by this */
    private long waiting;

    private byte[] buf = new byte[CHUNK];
    private int len;
    private volatile Throwable failure;
    private volatile boolean abandoned;

    ChunkPipe() {
        this(LIMIT);
    }

    ChunkPipe(long limit) {
        this.limit = limit;
    }

    @Override
    public void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int n) throws IOException {
        if (abandoned) {
            throw new IOException("the client went away");
        }
        while (n > 0) {
            int k = Math.min(n, CHUNK - len);
            System.arraycopy(b, off, buf, len, k);
            len += k;
            off += k;
            n -= k;
            if (len == CHUNK) {
                flush();
            }
        }
    }

    @Override
    public void flush() {
        if (len > 0) {
            synchronized (this) {
                waiting += len;
            }
            chunks.add(len == buf.length ? buf : Arrays.copyOf(buf, len));
            buf = new byte[CHUNK];
            len = 0;
        }
    }

    /**
     * Producer side, where it holds no lock: waits while more than the limit waits for the client. Throws when the
     * client went away meanwhile (or the thread was interrupted).
     */
    void awaitRoom() throws IOException {
        synchronized (this) {
            while (waiting > limit && !abandoned) {
                try {
                    wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new java.io.InterruptedIOException("interrupted while the client was slow");
                }
            }
        }
        if (abandoned) {
            throw new IOException("the client went away");
        }
    }

    /** True once the consumer stopped (the client went away): a producer's failure from then on is that. */
    boolean abandoned() {
        return abandoned;
    }

    /** Bytes handed over and not yet written to the client. */
    synchronized long waiting() {
        return waiting;
    }

    /** Producer side: no more bytes; {@code error} non-null when production failed. */
    void finish(Throwable error) {
        failure = error;
        flush();
        chunks.add(END);
    }

    /** Consumer side: writes every chunk to {@code out} until {@link #finish}; rethrows a production failure. */
    void drainTo(OutputStream out) throws IOException, InterruptedException {
        try {
            for (byte[] c; (c = chunks.take()) != END; ) {
                out.write(c);
                synchronized (this) {
                    waiting -= c.length;
                    notifyAll();
                }
            }
        } catch (IOException | RuntimeException | InterruptedException e) {
            synchronized (this) {
                abandoned = true;
                notifyAll();
            }
            chunks.clear(); // what waited for the client goes now, not when the producer notices
            throw e;
        }
        if (failure != null) {
            throw new IOException("dump failed: " + failure, failure);
        }
    }
}

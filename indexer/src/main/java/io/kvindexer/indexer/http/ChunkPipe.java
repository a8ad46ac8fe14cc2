package io.kvindexer.indexer.http;

import java.io.IOException;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * Hands bytes from a producer thread to the thread that owns the response, in chunks: the producer never blocks
 * (it may hold an index's read lock, which the writers need), the consumer streams while the producer is still
 * encoding. Memory is bounded by what the client has not yet taken, at worst the whole payload.
 */
final class ChunkPipe extends OutputStream {

    private static final int CHUNK = 256 * 1024;
    private static final byte[] END = new byte[0];

    private final LinkedBlockingQueue<byte[]> chunks = new LinkedBlockingQueue<>();
    private byte[] buf = new byte[CHUNK];
    private int len;
    private volatile Throwable failure;
    private volatile boolean abandoned;

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
            chunks.add(len == buf.length ? buf : Arrays.copyOf(buf, len));
            buf = new byte[CHUNK];
            len = 0;
        }
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
            }
        } catch (IOException | RuntimeException | InterruptedException e) {
            abandoned = true;
            throw e;
        }
        if (failure != null) {
            throw new IOException("dump failed: " + failure, failure);
        }
    }
}

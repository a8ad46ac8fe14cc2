package io.kvindexer.indexer.snapshot;

import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * An in-memory stream in 1 MiB chunks: one step of a cut's walk is encoded here under an index read lock (fast, no
 * I/O), then {@link #drainTo drained} to the file once the walk lets go of the lock. So a snapshot holds one step
 * in memory, not the whole cut.
 */
final class ChunkedBytes extends OutputStream {

    private static final int CHUNK = 1 << 20;

    private final List<byte[]> full = new ArrayList<>();
    private byte[] current = new byte[CHUNK];
    private int used;
    private long drained;
    private long mostHeld;

    @Override
    public void write(int b) {
        if (used == CHUNK) {
            next();
        }
        current[used++] = (byte) b;
    }

    @Override
    public void write(byte[] b, int off, int len) {
        while (len > 0) {
            if (used == CHUNK) {
                next();
            }
            int n = Math.min(len, CHUNK - used);
            System.arraycopy(b, off, current, used, n);
            used += n;
            off += n;
            len -= n;
        }
    }

    private void next() {
        full.add(current);
        current = new byte[CHUNK];
        used = 0;
    }

    /** Everything written so far, drained or not. */
    long size() {
        return drained + held();
    }

    /** The most bytes this stream held at once (at a drain). */
    long mostHeld() {
        return Math.max(mostHeld, held());
    }

    private long held() {
        return (long) full.size() * CHUNK + used;
    }

    /** Writes what it holds to {@code out} and lets it go (keeping one chunk for the next step). */
    void drainTo(OutputStream out) throws IOException {
        mostHeld = mostHeld();
        for (byte[] chunk : full) {
            out.write(chunk);
        }
        out.write(current, 0, used);
        drained += held();
        full.clear();
        used = 0;
    }
}

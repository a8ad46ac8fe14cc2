package io.kvindexer.indexer.snapshot;

import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;

/** An in-memory stream in 1 MiB chunks: a cut is encoded here (fast, under the index read locks), then written out. */
final class ChunkedBytes extends OutputStream {

    private static final int CHUNK = 1 << 20;

    private final List<byte[]> full = new ArrayList<>();
    private byte[] current = new byte[CHUNK];
    private int used;

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

    long size() {
        return (long) full.size() * CHUNK + used;
    }

    void writeTo(OutputStream out) throws IOException {
        for (byte[] chunk : full) {
            out.write(chunk);
        }
        out.write(current, 0, used);
    }
}

package io.kvindexer.indexer.recovery;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;

/**
 * A peer's {@code /dump} body that must keep coming. The request's timeout bounds only the wait for the response
 * headers; a peer that sends them and then stalls, or drips a byte now and then, would hold a restarting replica
 * not Ready for good, never asking the next peer or its snapshot. So each {@link #WINDOW} bytes must arrive within
 * the peer timeout of the previous ones (about 6.5 KB/s at the default 10 s, far below any network a dump crosses);
 * else a watchdog closes the body, and the blocked read fails with the reason.
 */
final class PeerBodyDeadline extends FilterInputStream {

    static final int WINDOW = 64 * 1024;

    private final long timeoutNanos;
    private final Thread watchdog;
    /** when the current window began (nanoTime): written by the reader, read by the watchdog */
    private volatile long windowStart = System.nanoTime();

    private long windowBytes;
    private volatile boolean expired;

    PeerBodyDeadline(InputStream body, Duration timeout) {
        super(body);
        this.timeoutNanos = timeout.toNanos();
        this.watchdog = Thread.ofVirtual().name("peer-body-deadline").start(this::watch);
    }

    private void watch() {
        try {
            while (true) {
                long left = windowStart + timeoutNanos - System.nanoTime();
                if (left <= 0) {
                    expired = true;
                    in.close(); // the reader's blocked read fails now
                    return;
                }
                Thread.sleep(Duration.ofNanos(left));
            }
        } catch (InterruptedException | IOException e) {
            // the body was closed by its reader, or closing it failed: nothing more to watch
        }
    }

    @Override
    public int read() throws IOException {
        try {
            int b = super.read();
            progressed(b < 0 ? 0 : 1);
            return b;
        } catch (IOException e) {
            throw stalledOr(e);
        }
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        try {
            int n = super.read(b, off, len);
            progressed(Math.max(n, 0));
            return n;
        } catch (IOException e) {
            throw stalledOr(e);
        }
    }

    private void progressed(int n) throws IOException {
        if (expired) {
            throw stalled();
        }
        windowBytes += n;
        if (windowBytes >= WINDOW) {
            windowBytes = 0;
            windowStart = System.nanoTime();
        }
    }

    private IOException stalledOr(IOException e) {
        return expired ? stalled() : e;
    }

    private IOException stalled() {
        return new IOException("the peer's dump stalled: less than " + WINDOW / 1024 + " KiB arrived in "
                + Duration.ofNanos(timeoutNanos).toMillis() + " ms");
    }

    @Override
    public void close() throws IOException {
        watchdog.interrupt();
        super.close();
    }
}

package io.kvindexer.indexer.recovery;

import io.kvindexer.indexer.common.Watchdog;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;

/**
 * A peer's {@code /dump} body that must keep coming, and end. The request's timeout bounds only the wait for the
 * response headers; a peer that sends them and then stalls, or drips a byte now and then, would hold a restarting
 * replica not Ready for good, never asking the next peer or its snapshot. So each {@link #WINDOW} bytes must arrive
 * within the peer timeout of the previous ones (about 6.5 KB/s at the default 10 s, far below any network a dump
 * crosses), and the whole body within {@link #WHOLE_BODY_TIMEOUTS} peer timeouts (5 minutes at the default: a peer
 * that trickles just above that rate would otherwise hold the recovery for hours; a dump of millions of blocks
 * crosses even a slow link in a fraction of it). Else the {@link Watchdog} closes the body, and the blocked read fails
 * with the reason.
 */
final class PeerBodyDeadline extends FilterInputStream {

    static final int WINDOW = 64 * 1024;
    /** the whole body's bound, in peer timeouts */
    static final int WHOLE_BODY_TIMEOUTS = 30;

    private final long timeoutNanos;
    /** the whole body's bound here, in peer timeouts: {@link #WHOLE_BODY_TIMEOUTS} but in tests */
    private final int wholeBodyTimeouts;
    /** when the whole body must be in (nanoTime) */
    private final long wholeBy;

    private final Watch watch = new Watch();

    private long windowBytes;
    /** why the watchdog closed the body; null while it has not */
    private volatile String expired;

    /** {@code wholeBodyTimeouts}: {@link #WHOLE_BODY_TIMEOUTS}, or a test's shorter bound. */
    PeerBodyDeadline(InputStream body, Duration timeout, int wholeBodyTimeouts) {
        super(body);
        this.timeoutNanos = timeout.toNanos();
        this.wholeBodyTimeouts = wholeBodyTimeouts;
        long now = System.nanoTime();
        this.wholeBy = now + wholeBodyTimeouts * timeoutNanos;
        watch.windowFrom(now);
    }

    /** The body's deadline: the current window's end, or the whole body's if sooner. */
    private final class Watch extends Watchdog.Deadline {
        void windowFrom(long start) {
            armAt(Math.min(start + timeoutNanos, wholeBy));
        }

        void stop() {
            retire();
        }

        @Override
        protected void expired(long now) {
            cancel();
            expired = now - wholeBy >= 0
                    ? "the peer's dump did not end within " + millis(wholeBodyTimeouts * timeoutNanos) + " ms ("
                            + wholeBodyTimeouts + " peer timeouts): given up"
                    : "the peer's dump stalled: less than " + WINDOW / 1024 + " KiB arrived in " + millis(timeoutNanos)
                            + " ms";
            Thread.ofVirtual()
                    .name("peer-body-close")
                    .start(
                            () -> { // not on the watchdog's thread
                                try {
                                    in.close(); // the reader's blocked read fails now
                                } catch (IOException e) {
                                    // closing failed: the read fails or ends on its own
                                }
                            });
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
        if (expired != null) {
            throw stalled();
        }
        windowBytes += n;
        if (windowBytes >= WINDOW) {
            windowBytes = 0;
            watch.windowFrom(System.nanoTime());
        }
    }

    private IOException stalledOr(IOException e) {
        return expired != null ? stalled() : e;
    }

    private IOException stalled() {
        return new IOException(expired);
    }

    private static long millis(long nanos) {
        return Duration.ofNanos(nanos).toMillis();
    }

    @Override
    public void close() throws IOException {
        watch.stop();
        super.close();
    }
}

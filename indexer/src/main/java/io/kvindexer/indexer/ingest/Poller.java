package io.kvindexer.indexer.ingest;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One poller thread: owns the engine connections ({@link Subscriber}s) of the streams given to it, all registered on
 * its one selector, and serves them round-robin, at most {@link #BATCH} messages per stream and turn, so one busy
 * engine cannot starve the others. It blocks in the selector while nothing is readable. Everything that touches a stream's socket runs here: commands from other
 * threads are queued ({@link #submit}) and run at the top of the next turn.
 */
final class Poller implements Runnable {

    private static final System.Logger LOG = System.getLogger(Poller.class.getName());

    /** messages read from one stream per turn */
    static final int BATCH = 64;
    /** longest wait in the selector: how soon handshake deadlines and the ready gate are looked at */
    static final long WAIT_MILLIS = 20;
    /**
     * how often every stream's duties and read interest are looked at while the poller is busy: as often as when it
     * idles in the selector (a sweep costs every stream; at 5 ms it took ~9 % of the pollers' samples with 1,024
     * engines), and soon enough for the deadlines it serves (handshake 2 s, reconnect from 100 ms, PING 5 s)
     */
    private static final long SWEEP_NANOS = WAIT_MILLIS * 1_000_000L;

    /** the selector's idle wait: {@link #WAIT_MILLIS}, longer only in a test that shows commands do not wait for it */
    private final long waitMillis;

    private final InflightBytes inflight;
    private final ConcurrentLinkedQueue<Command> commands = new ConcurrentLinkedQueue<>();
    private final List<Stream> streams = new ArrayList<>();
    private final AtomicInteger size = new AtomicInteger();
    private final Thread thread;
    /** every stream's connection is registered here: one selector for all of this poller's engines */
    private final Selector selector;

    private volatile boolean closed;

    Poller(InflightBytes inflight, String name, long waitMillis) {
        this.inflight = inflight;
        this.waitMillis = waitMillis;
        try {
            this.selector = Selector.open();
        } catch (IOException e) {
            throw new UncheckedIOException("an ingest poller cannot open a selector", e);
        }
        this.thread = new Thread(this, name);
        this.thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    /** Streams served (for placing new ones on the least loaded poller). */
    int size() {
        return size.get();
    }

    /** What another thread asks of a poller: an action on one of its streams, whose duties are then run at once. */
    private record Command(Stream stream, Runnable action) {}

    /**
     * Runs {@code action} on this poller's thread before its next turn, then {@code stream}'s duties and read
     * interest (not every stream's: 4,096 registrations, each sweeping every stream, cost O(n²)). From another thread
     * it wakes the selector, so that a stop or a replay's end is acted on at once, not after the idle wait (closing
     * 1,024 listeners one after the other took 10 s that way).
     */
    void submit(Stream stream, Runnable action) {
        commands.add(new Command(stream, action));
        if (!onPollerThread()) {
            selector.wakeup();
        }
    }

    Selector selector() {
        return selector;
    }

    boolean onPollerThread() {
        return Thread.currentThread() == thread;
    }

    /** Adds a stream (on the poller thread: its socket is made there). */
    void add(Stream stream) {
        size.incrementAndGet();
        submit(stream, () -> {
            streams.add(stream);
            stream.open();
        });
    }

    /** Called on the poller thread by a stream that has closed its socket for good. */
    void removed(Stream stream) {
        if (streams.remove(stream)) {
            size.decrementAndGet();
        }
    }

    void close() {
        closed = true;
        selector.wakeup(); // not to wait out the idle wait
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void run() {
        try {
            List<Stream> kept = new ArrayList<>();
            List<Stream> next = new ArrayList<>();
            long lastSweep = 0;
            List<Stream> touched = new ArrayList<>();
            while (!closed) {
                touched.clear();
                for (Command c; (c = commands.poll()) != null; ) {
                    runSafely(c.action());
                    touched.add(c.stream());
                }
                long now = System.nanoTime();
                if (now - lastSweep >= SWEEP_NANOS) {
                    // every stream's duties (deadlines, gate, stop) and read interest; not every turn: a busy
                    // poller turns often, and a sweep costs all its streams
                    lastSweep = now;
                    kept.clear();
                    for (Stream s : new ArrayList<>(streams)) {
                        duties(s, kept);
                    }
                } else {
                    for (Stream s : touched) {
                        if (s.isServed() && !kept.contains(s)) {
                            duties(s, kept);
                        }
                    }
                }
                try {
                    if (kept.isEmpty()) {
                        selector.select(waitMillis); // parks while nothing is readable, until a command wakes it
                    } else {
                        selector.selectNow();
                    }
                } catch (IOException e) {
                    LOG.log(System.Logger.Level.ERROR, "ingest poller's selector failed", e);
                    return;
                }
                next.clear();
                for (SelectionKey key : selector.selectedKeys()) {
                    if (key.attachment() instanceof Stream s) {
                        runSafely(() -> serve(s));
                        if (s.subscriber().hasKept() && s.wantsRead()) {
                            next.add(s);
                        }
                    }
                }
                selector.selectedKeys().clear();
                for (Stream s : kept) {
                    if (s.subscriber().hasKept() && s.wantsRead() && inflight.hasRoom()) {
                        runSafely(() -> s.drain(BATCH)); // what an earlier read left: the socket will not signal it
                    }
                    // a stream that reads nothing now (a replay runs) leaves the turns, not to spin the selector;
                    // the replay's end, a command for this stream, brings it back
                    if (s.subscriber().hasKept() && s.wantsRead()) {
                        next.add(s);
                    }
                }
                List<Stream> swap = kept;
                kept = next;
                next = swap;
            }
        } finally {
            for (Stream s : new ArrayList<>(streams)) {
                runSafely(() -> s.subscriber().close());
            }
            try {
                selector.close();
            } catch (IOException e) {
                LOG.log(System.Logger.Level.DEBUG, "closing a poller's selector failed", e);
            }
        }
    }

    /** A stream's duties and read interest; kept for this turn's drain when an earlier read left messages. */
    private void duties(Stream s, List<Stream> kept) {
        runSafely(s::tick);
        boolean read = s.wantsRead() && inflight.hasRoom();
        s.subscriber().wantRead(read); // off: the bytes wait in the kernel, then at the engine
        if (read && s.subscriber().hasKept()) {
            kept.add(s);
        }
    }

    /** A selected connection: connect, write and handshake, then up to {@link #BATCH} messages when it may read. */
    private void serve(Stream s) {
        boolean wasReady = s.subscriber().ready();
        s.subscriber().service();
        if (!wasReady && s.subscriber().ready()) {
            s.tick(); // a handshake that just finished starts a pending catch-up replay now, not a sweep later
        }
        // read interest at once, not at the next sweep: off, or the selector reports the stream every turn; on, or a
        // connection that just became ready is not read (nor a libzmq PING answered) until then
        boolean read = s.wantsRead() && inflight.hasRoom();
        s.subscriber().wantRead(read);
        if (read) {
            s.drain(BATCH);
        }
    }

    private static void runSafely(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "ingest poller task failed", e);
        }
    }
}

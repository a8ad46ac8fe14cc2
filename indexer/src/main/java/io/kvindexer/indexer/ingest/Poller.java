package io.kvindexer.indexer.ingest;

import java.io.IOException;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import zmq.ZMQ;
import zmq.poll.PollItem;

/**
 * One poller thread: owns the SUB sockets of the streams given to it and serves them round-robin, at most
 * {@link #BATCH} messages per stream and turn, so one busy engine cannot starve the others. It blocks in the
 * selector while nothing is readable. Everything that touches a stream's socket runs here: commands from other
 * threads are queued ({@link #submit}) and run at the top of the next turn.
 */
final class Poller implements Runnable {

    private static final System.Logger LOG = System.getLogger(Poller.class.getName());

    /** messages read from one stream per turn */
    static final int BATCH = 64;
    /** longest wait in the selector: how soon commands, handshake deadlines and the ready gate are looked at */
    private static final long WAIT_MILLIS = 20;

    private final InflightBytes inflight;
    private final ConcurrentLinkedQueue<Runnable> commands = new ConcurrentLinkedQueue<>();
    private final List<Stream> streams = new ArrayList<>();
    private final AtomicInteger size = new AtomicInteger();
    private final Thread thread;
    private volatile boolean closed;

    Poller(InflightBytes inflight, String name) {
        this.inflight = inflight;
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

    /** Runs {@code command} on this poller's thread, before its next turn. */
    void submit(Runnable command) {
        commands.add(command);
    }

    boolean onPollerThread() {
        return Thread.currentThread() == thread;
    }

    /** Adds a stream (on the poller thread: its socket is made there). */
    void add(Stream stream) {
        size.incrementAndGet();
        submit(() -> {
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
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void run() {
        Selector selector;
        try {
            selector = Selector.open();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.ERROR, "ingest poller cannot open a selector", e);
            return;
        }
        try {
            List<Stream> ready = new ArrayList<>();
            PollItem[] items = new PollItem[0];
            while (!closed) {
                for (Runnable c; (c = commands.poll()) != null; ) {
                    runSafely(c);
                }
                ready.clear();
                for (Stream s : new ArrayList<>(streams)) {
                    runSafely(s::tick);
                    if (s.readable() && inflight.hasRoom()) {
                        ready.add(s);
                    }
                }
                if (ready.isEmpty()) {
                    ZMQ.poll(selector, new PollItem[1], 0, WAIT_MILLIS); // parks: nothing to read
                    continue;
                }
                if (items.length < ready.size()) {
                    items = new PollItem[Math.max(ready.size(), items.length * 2)];
                }
                for (int i = 0; i < ready.size(); i++) {
                    items[i] = new PollItem(ready.get(i).socketBase(), ZMQ.ZMQ_POLLIN);
                }
                int n = ZMQ.poll(selector, items, ready.size(), WAIT_MILLIS);
                if (n < 0) {
                    return; // the context is closing
                }
                for (int i = 0; i < ready.size(); i++) {
                    if (items[i].isReadable()) {
                        Stream s = ready.get(i);
                        runSafely(() -> s.drain(BATCH));
                    }
                    items[i] = null;
                }
            }
        } finally {
            try {
                selector.close();
            } catch (IOException e) {
                LOG.log(System.Logger.Level.DEBUG, "closing a poller's selector failed", e);
            }
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

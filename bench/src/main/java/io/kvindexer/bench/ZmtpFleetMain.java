package io.kvindexer.bench;

import io.kvindexer.indexer.ingest.zmtp.Zmtp;
import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Many engine ranks in one process as lean ZeroMQ publishers: each a ZMTP 3.0 PUB (NULL mechanism) written over
 * {@code java.nio}, listening on its own TCP port, one thread for all of them. It speaks to the indexer exactly as a
 * libzmq PUB does (greeting, READY with {@code Socket-Type=PUB}, the subscription read from the SUB, then
 * {@code [topic, seq, payload]} messages, none before the subscription), but a message is bytes encoded once before
 * the clock and sent with one gathering write per connection, so a thousand engines cost a fraction of a core.
 * The same line protocol as {@code libzmq_fleet.py} ({@link FleetPublishers}): args {@code ENGINES BLOCK_SIZE
 * SNDHWM} (the queue is unbounded, as {@code SNDHWM 0}); {@code subscribed}, {@code load PATH},
 * {@code send [R]} (paced: then {@code PATH.sent} holds when each message was sent), {@code quit}.
 */
public final class ZmtpFleetMain {

    private static final byte[] HELLO = concat(Zmtp.greeting(), Zmtp.ready("PUB"));

    /** One engine: its listening port, its SUB's connection, what waits to go out. */
    private static final class Engine {
        ServerSocketChannel server;
        SocketChannel peer;
        final ByteBuffer in = ByteBuffer.allocate(4096);
        int greetingLeft = Zmtp.GREETING_SIZE;
        boolean subscribed;
        final ArrayDeque<ByteBuffer> out = new ArrayDeque<>();
        long seq;
    }

    private final Engine[] engines;
    private final Selector selector;
    private final ConcurrentLinkedQueue<String> commands = new ConcurrentLinkedQueue<>();
    private int[] loadedEngine = new int[0];
    private List<ByteBuffer> loaded = List.of();
    private Path loadedFrom;
    /** a paced send's stamps: the epoch microseconds each message was sent (queued, when its socket was full) */
    private long[] sentAt = new long[0];

    private ZmtpFleetMain(int n) throws IOException {
        selector = Selector.open();
        engines = new Engine[n];
        for (int i = 0; i < n; i++) {
            Engine e = new Engine();
            e.server = ServerSocketChannel.open();
            e.server.bind(new InetSocketAddress("127.0.0.1", 0));
            e.server.configureBlocking(false);
            e.server.register(selector, SelectionKey.OP_ACCEPT, e);
            engines[i] = e;
            System.out.println(
                    "ENGINE " + i + " tcp://127.0.0.1:" + e.server.socket().getLocalPort() + " -");
        }
        System.out.println("READY");
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        ZmtpFleetMain fleet = new ZmtpFleetMain(Integer.parseInt(args[0]));
        Thread stdin = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    fleet.commands.add(line);
                    fleet.selector.wakeup();
                }
            } catch (IOException e) {
                // the bench went away: quit below
            }
            fleet.commands.add("quit");
            fleet.selector.wakeup();
        });
        stdin.setDaemon(true);
        stdin.start();
        fleet.run();
    }

    private void run() throws IOException {
        int next = -1; // the next loaded message to send while a paced send runs
        double perSecond = 0;
        long startNanos = 0;
        long startMs = 0;
        long cpu = 0;
        while (true) {
            long timeout = 0;
            if (next >= 0) {
                long due = startNanos + (long) (next / perSecond * 1e9);
                long wait = due - System.nanoTime();
                if (wait <= 0) {
                    long now = System.nanoTime();
                    for (; next < loaded.size() && startNanos + (long) (next / perSecond * 1e9) <= now; next++) {
                        queue(next);
                        sentAt[next] = startMs * 1_000L + (System.nanoTime() - startNanos) / 1_000L;
                    }
                    if (next == loaded.size()) {
                        writeSent();
                        answer("SENT " + loaded.size() + " " + cpuSeconds(cpu) + " " + startMs);
                        next = -1;
                    }
                    timeout = -1;
                } else {
                    timeout = Math.max(1, wait / 1_000_000);
                }
            }
            if (timeout < 0) {
                selector.selectNow();
            } else {
                selector.select(timeout);
            }
            for (SelectionKey key : selector.selectedKeys()) {
                Engine e = (Engine) key.attachment();
                try {
                    if (key.isValid() && key.isAcceptable()) {
                        accept(e);
                    } else if (key.isValid()) {
                        if (key.isReadable()) {
                            read(e);
                        }
                        if (e.peer != null && key.isValid() && key.isWritable()) {
                            flush(e);
                        }
                    }
                } catch (IOException ex) {
                    drop(e);
                }
            }
            selector.selectedKeys().clear();
            for (String c; (c = commands.poll()) != null; ) {
                String[] cmd = c.split(" ");
                switch (cmd[0]) {
                    case "subscribed" -> {
                        int n = 0;
                        for (Engine e : engines) {
                            n += e.subscribed ? 1 : 0;
                        }
                        answer("SUBSCRIBED " + n);
                    }
                    case "load" -> {
                        load(Path.of(cmd[1]));
                        answer("LOADED " + loaded.size());
                    }
                    case "send" -> {
                        cpu = cpuNanos();
                        if (cmd.length > 1) {
                            perSecond = Double.parseDouble(cmd[1]);
                            startMs = System.currentTimeMillis() + 100;
                            startNanos = System.nanoTime() + 100_000_000L;
                            next = 0;
                            sentAt = new long[loaded.size()];
                        } else {
                            // everything queued first, then each connection written many messages per system
                            // call: one engine or a thousand, publishing costs about the same
                            for (int m = 0; m < loaded.size(); m++) {
                                enqueue(m);
                            }
                            for (Engine e : engines) {
                                if (!e.out.isEmpty()) {
                                    flushOrDrop(e);
                                }
                            }
                            answer("SENT " + loaded.size() + " " + cpuSeconds(cpu) + " " + System.currentTimeMillis());
                        }
                    }
                    case "quit" -> {
                        return;
                    }
                    default -> throw new IllegalArgumentException("unknown command " + c);
                }
            }
        }
    }

    /** Reads a file of {@code u32 engine, u32 length, payload} records and frames each as one ZMTP message. */
    private void load(Path file) throws IOException {
        loadedFrom = file;
        List<Integer> order = new ArrayList<>();
        List<ByteBuffer> messages = new ArrayList<>();
        try (DataInputStream in = new DataInputStream(new java.io.BufferedInputStream(Files.newInputStream(file)))) {
            while (in.available() > 0) {
                int engine = in.readInt();
                byte[] payload = new byte[in.readInt()];
                in.readFully(payload);
                Engine e = engines[engine];
                boolean longFrame = payload.length > 255;
                ByteBuffer m = ByteBuffer.allocate(2 + 10 + (longFrame ? 9 : 2) + payload.length);
                m.put((byte) Zmtp.FLAG_MORE).put((byte) 0); // the empty topic
                m.put((byte) Zmtp.FLAG_MORE).put((byte) 8).putLong(e.seq++);
                if (longFrame) {
                    m.put((byte) Zmtp.FLAG_LONG).putLong(payload.length);
                } else {
                    m.put((byte) 0).put((byte) payload.length);
                }
                m.put(payload).flip();
                order.add(engine);
                messages.add(m);
            }
        }
        loadedEngine = order.stream().mapToInt(Integer::intValue).toArray();
        loaded = messages;
    }

    /** Writes the paced send's stamps to {@code FILE.sent}, as {@code libzmq_fleet.py} does: a big-endian i64 each. */
    private void writeSent() throws IOException {
        ByteBuffer bytes = ByteBuffer.allocate(sentAt.length * Long.BYTES);
        bytes.asLongBuffer().put(sentAt);
        Files.write(Path.of(loadedFrom + ".sent"), bytes.array());
    }

    /** Sends message {@code m} now, or after what its engine has queued before it. */
    private void queue(int m) {
        if (enqueue(m)) {
            flushOrDrop(engines[loadedEngine[m]]);
        }
    }

    /**
     * A PUB queues for a subscribed peer and drops what no subscriber wants; true when {@code m} is the first in its
     * engine's queue (nothing else will write it).
     */
    private boolean enqueue(int m) {
        Engine e = engines[loadedEngine[m]];
        if (e.peer == null || !e.subscribed) {
            return false;
        }
        e.out.add(loaded.get(m));
        return e.out.size() == 1;
    }

    private void flushOrDrop(Engine e) {
        try {
            flush(e);
        } catch (IOException ex) {
            drop(e);
        }
    }

    private void accept(Engine e) throws IOException {
        SocketChannel c = e.server.accept();
        if (c == null) {
            return;
        }
        if (e.peer != null) {
            drop(e); // one subscriber per engine here: the indexer's newest connection
        }
        c.configureBlocking(false);
        e.peer = c;
        e.in.clear();
        e.greetingLeft = Zmtp.GREETING_SIZE;
        e.out.add(ByteBuffer.wrap(HELLO));
        c.register(selector, SelectionKey.OP_READ | SelectionKey.OP_WRITE, e);
        flush(e);
    }

    /** The SUB's greeting, READY and subscription; the subscription (a message starting with 1) is all we keep. */
    private void read(Engine e) throws IOException {
        if (e.peer.read(e.in) < 0) {
            drop(e);
            return;
        }
        e.in.flip();
        int skip = Math.min(e.greetingLeft, e.in.remaining());
        e.in.position(e.in.position() + skip);
        e.greetingLeft -= skip;
        while (e.in.remaining() >= 2) {
            int flags = e.in.get(e.in.position()) & 0xff;
            if ((flags & Zmtp.FLAG_LONG) != 0) {
                throw new IOException("a SUB sends no long frames here");
            }
            int size = e.in.get(e.in.position() + 1) & 0xff;
            if (e.in.remaining() < 2 + size) {
                break;
            }
            if ((flags & Zmtp.FLAG_COMMAND) == 0 && size > 0 && e.in.get(e.in.position() + 2) == 1) {
                e.subscribed = true;
            }
            e.in.position(e.in.position() + 2 + size);
        }
        e.in.compact();
    }

    /** Writes what waits, many messages per system call; asks for a write turn while some is left. */
    private void flush(Engine e) throws IOException {
        while (!e.out.isEmpty()) {
            ByteBuffer[] batch = e.out.stream().limit(64).toArray(ByteBuffer[]::new);
            e.peer.write(batch);
            int done = 0;
            while (!e.out.isEmpty() && !e.out.peekFirst().hasRemaining()) {
                e.out.pollFirst();
                done++;
            }
            if (done < batch.length) {
                break; // the socket's buffer is full: on with the next write turn
            }
        }
        SelectionKey key = e.peer.keyFor(selector);
        if (key != null && key.isValid()) {
            key.interestOps(SelectionKey.OP_READ | (e.out.isEmpty() ? 0 : SelectionKey.OP_WRITE));
        }
    }

    private void drop(Engine e) {
        if (e.peer != null) {
            try {
                e.peer.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
        e.peer = null;
        e.subscribed = false;
        e.out.clear(); // queued messages go with the connection, as at a PUB
    }

    private static void answer(String line) {
        System.out.println(line);
        System.out.flush();
    }

    private static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    private static String cpuSeconds(long since) {
        return String.format("%.3f", (cpuNanos() - since) / 1e9);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] c = new byte[a.length + b.length];
        System.arraycopy(a, 0, c, 0, a.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }
}

package io.kvindexer.indexer.sim;

import io.kvindexer.indexer.ingest.Frames;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The simulator's one socket thread: owns the PUB (an XPUB, which sends exactly like vLLM's PUB and also shows
 * subscriptions arriving) and the replay ROUTER, and carries out commands in the order they were queued.
 */
final class SimPublisher {

    private static final System.Logger LOG = System.getLogger(SimPublisher.class.getName());

    sealed interface Command {}

    record Send(long seq, byte[] payload, boolean live, CompletableFuture<Long> done) implements Command {}

    record Raw(List<byte[]> frames, CompletableFuture<Long> done) implements Command {}

    record ClearBuffer() implements Command {}

    record AnswerDeferred(CompletableFuture<Long> done) implements Command {}

    record Pause(long millis) implements Command {}

    record Stop() implements Command {}

    private final EngineSimulator.Options options;
    private final ReplayRouter replay;
    private final byte[] topic;
    private final ZContext context;
    private final boolean ownsContext;
    private final BlockingQueue<Command> commands = new LinkedBlockingQueue<>();
    private final Thread thread;
    private final CompletableFuture<String[]> bound = new CompletableFuture<>();
    final AtomicInteger subscriptions = new AtomicInteger();
    private volatile RuntimeException failure;

    SimPublisher(EngineSimulator.Options options, ReplayRouter replay, byte[] topic) {
        this.options = options;
        this.replay = replay;
        this.topic = topic;
        this.ownsContext = options.context() == null;
        this.context = ownsContext ? new ZContext(1) : options.context();
        this.thread = new Thread(this::run, "engine-sim-publisher");
        this.thread.setDaemon(true);
    }

    /** Starts the thread; returns the connectable {PUB, ROUTER-or-null} endpoints once bound. */
    String[] start() {
        thread.start();
        try {
            return bound.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            stop();
            throw new IllegalStateException(
                    "engine simulator could not bind: " + e.getCause().getMessage(), e.getCause());
        } catch (Exception e) {
            stop();
            throw new IllegalStateException("engine simulator did not start", e);
        }
    }

    void submit(Command command) {
        commands.add(command);
        if (failure != null) {
            failQueued(); // the thread has ended: nothing will carry the command out
        }
    }

    /** Stops the thread and closes the sockets (linger 0, no end-of-stream message, like vLLM). */
    void stop() {
        commands.add(new Stop());
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (ownsContext) {
            context.close();
        }
    }

    private void run() {
        ZMQ.Socket pub = null;
        ZMQ.Socket router = null;
        try {
            pub = context.createSocket(SocketType.XPUB);
            pub.setXpubVerbose(true);
            pub.setLinger(0);
            pub.setSndHWM(options.hwm());
            bind(pub, options.endpoint());
            String replayAt = null;
            if (options.replayEndpoint() != null) {
                router = context.createSocket(SocketType.ROUTER);
                router.setLinger(0);
                // vLLM keeps ZeroMQ's default send HWM (1,000): a long replay answer is cut (ReplayRouter)
                router.setRouterMandatory(true);
                bind(router, options.replayEndpoint());
                replayAt = connectable(router.getLastEndpoint());
            }
            bound.complete(new String[] {connectable(pub.getLastEndpoint()), replayAt});
        } catch (RuntimeException e) {
            bound.completeExceptionally(e);
            Frames.closeQuietly(pub);
            Frames.closeQuietly(router);
            return;
        }
        try {
            loop(pub, router);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            // a caller waiting on a command's future would otherwise wait for good
            LOG.log(System.Logger.Level.ERROR, "engine simulator's socket thread failed", e);
            failure = e;
            failQueued();
        } finally {
            Frames.closeQuietly(pub);
            Frames.closeQuietly(router);
        }
    }

    private void loop(ZMQ.Socket pub, ZMQ.Socket router) throws InterruptedException {
        while (true) {
            readSubscriptions(pub);
            if (router != null) {
                replay.serve(router);
            }
            Command command = commands.poll(10, TimeUnit.MILLISECONDS);
            if (command == null) {
                continue;
            }
            switch (command) {
                case Send s -> {
                    if (s.live()) {
                        Frames.send(pub, topic, Frames.seqBytes(s.seq()), s.payload());
                    }
                    replay.remember(s.seq(), s.payload());
                    s.done().complete(s.seq());
                }
                case Raw r -> {
                    Frames.send(pub, r.frames().toArray(new byte[0][]));
                    r.done().complete((long) r.frames().size());
                }
                case ClearBuffer c -> replay.clear();
                case AnswerDeferred a -> a.done().complete(replay.answerDeferred(router));
                case Pause p -> Thread.sleep(p.millis());
                case Stop s -> {
                    return;
                }
            }
        }
    }

    private void failQueued() {
        Command command;
        while ((command = commands.poll()) != null) {
            CompletableFuture<Long> done = switch (command) {
                case Send c -> c.done();
                case Raw c -> c.done();
                case AnswerDeferred c -> c.done();
                case ClearBuffer c -> null;
                case Pause c -> null;
                case Stop c -> null;
            };
            if (done != null) {
                done.completeExceptionally(new IllegalStateException("the engine simulator has failed", failure));
            }
        }
    }

    private void readSubscriptions(ZMQ.Socket xpub) {
        byte[] message;
        while ((message = xpub.recv(ZMQ.DONTWAIT)) != null) {
            if (message.length > 0 && message[0] == 1) {
                subscriptions.incrementAndGet();
            }
        }
    }

    private static void bind(ZMQ.Socket socket, String endpoint) {
        Frames.ipv6For(socket, endpoint);
        if (!socket.bind(endpoint)) {
            throw new IllegalStateException("cannot bind " + endpoint);
        }
    }

    /** Wildcard hosts become loopback so tests can connect to what was bound; jeromq spells ::1 out in full. */
    private static String connectable(String lastEndpoint) {
        return lastEndpoint
                .replace("tcp://0.0.0.0:", "tcp://127.0.0.1:")
                .replace("tcp://*:", "tcp://127.0.0.1:")
                .replace("tcp://[0:0:0:0:0:0:0:1]:", "tcp://[::1]:");
    }
}

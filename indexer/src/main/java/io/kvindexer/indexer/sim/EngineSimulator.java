package io.kvindexer.indexer.sim;

import io.kvindexer.indexer.model.StorageTier;
import io.kvindexer.indexer.hash.BlockHasher;
import io.kvindexer.indexer.hash.SequenceHasher;
import io.kvindexer.indexer.sim.EngineEventEncoder.Format;
import io.kvindexer.indexer.sim.EngineEventEncoder.HashMode;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A vLLM-compatible KV-event publisher (wire spec §7): a PUB socket, an optional replay ROUTER, one publisher
 * thread that owns both, a per-batch sequence number and a ring buffer of past batches for replay.
 *
 * <p>Engine state (sequence numbers, what each (dp rank, tier) holds) changes when a batch is submitted, in
 * submission order; the publisher thread only does socket I/O, in the same order. So after
 * {@code publish(...)} returns, {@link #held} already reflects the batch, and after its future completes the
 * batch is on the wire. The fault controls ({@link #skip}, {@link #dropLive}, {@link #restart},
 * {@link #silentReplay}, {@link #deferReplays}, {@link #sendRaw}) exist to test subscribers.
 */
public final class EngineSimulator implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(EngineSimulator.class.getName());
    private static final byte[] EMPTY = new byte[0];
    private static final byte[] END_SEQ = {-1, -1, -1, -1, -1, -1, -1, -1};

    /** How replay replies are framed (wire spec §2.6). */
    public enum ReplayLayout {
        /** vLLM ≥ 0.26: {@code [id, "", topic, seq, payload]}, end {@code [id, "", "", ff×8, ""]}. */
        WITH_TOPIC,
        /** vLLM ≤ 0.25 and SGLang: {@code [id, "", seq, payload]}, end {@code [id, "", ff×8, ""]}. */
        LEGACY
    }

    /** One (dp rank, tier) of the engine: the ground-truth key. */
    public record Holder(int dpRank, StorageTier tier) {
    }

    /**
     * Configuration knobs (wire spec §7.1).
     *
     * @param endpoint       PUB bind address; {@code tcp://127.0.0.1:*} picks a free port
     * @param replayEndpoint ROUTER bind address; null disables replay
     * @param fixedTs        a fixed batch timestamp for golden tests; null uses the wall clock
     */
    public record Options(String endpoint, String replayEndpoint, int dpRank, String topic, int bufferSteps, int hwm,
                          Format format, HashMode hashMode, ReplayLayout replayLayout, long startSeq, Double fixedTs) {

        public Options {
            Objects.requireNonNull(endpoint, "endpoint");
            Objects.requireNonNull(topic, "topic");
            Objects.requireNonNull(format, "format");
            Objects.requireNonNull(hashMode, "hashMode");
            Objects.requireNonNull(replayLayout, "replayLayout");
            if (bufferSteps < 1) {
                throw new IllegalArgumentException("bufferSteps must be >= 1");
            }
        }

        /** Loopback with OS-chosen ports, replay on, vLLM map events, u64 hashes. */
        public static Options defaults() {
            return new Options("tcp://127.0.0.1:*", "tcp://127.0.0.1:*", 0, "", 10_000, 100_000, Format.MAP,
                    HashMode.U64, ReplayLayout.WITH_TOPIC, 0, null);
        }

        public Options withEndpoint(String v) {
            return new Options(v, replayEndpoint, dpRank, topic, bufferSteps, hwm, format, hashMode, replayLayout,
                    startSeq, fixedTs);
        }

        public Options withReplayEndpoint(String v) {
            return new Options(endpoint, v, dpRank, topic, bufferSteps, hwm, format, hashMode, replayLayout,
                    startSeq, fixedTs);
        }

        public Options withDpRank(int v) {
            return new Options(endpoint, replayEndpoint, v, topic, bufferSteps, hwm, format, hashMode, replayLayout,
                    startSeq, fixedTs);
        }

        public Options withTopic(String v) {
            return new Options(endpoint, replayEndpoint, dpRank, v, bufferSteps, hwm, format, hashMode, replayLayout,
                    startSeq, fixedTs);
        }

        public Options withBufferSteps(int v) {
            return new Options(endpoint, replayEndpoint, dpRank, topic, v, hwm, format, hashMode, replayLayout,
                    startSeq, fixedTs);
        }

        public Options withHwm(int v) {
            return new Options(endpoint, replayEndpoint, dpRank, topic, bufferSteps, v, format, hashMode,
                    replayLayout, startSeq, fixedTs);
        }

        public Options withFormat(Format v) {
            return new Options(endpoint, replayEndpoint, dpRank, topic, bufferSteps, hwm, v, hashMode, replayLayout,
                    startSeq, fixedTs);
        }

        public Options withHashMode(HashMode v) {
            return new Options(endpoint, replayEndpoint, dpRank, topic, bufferSteps, hwm, format, v, replayLayout,
                    startSeq, fixedTs);
        }

        public Options withReplayLayout(ReplayLayout v) {
            return new Options(endpoint, replayEndpoint, dpRank, topic, bufferSteps, hwm, format, hashMode, v,
                    startSeq, fixedTs);
        }

        public Options withStartSeq(long v) {
            return new Options(endpoint, replayEndpoint, dpRank, topic, bufferSteps, hwm, format, hashMode,
                    replayLayout, v, fixedTs);
        }

        public Options withFixedTs(Double v) {
            return new Options(endpoint, replayEndpoint, dpRank, topic, bufferSteps, hwm, format, hashMode,
                    replayLayout, startSeq, v);
        }
    }

    private sealed interface Command {
    }

    private record Send(long seq, byte[] payload, boolean live, CompletableFuture<Long> done) implements Command {
    }

    private record Raw(List<byte[]> frames, CompletableFuture<Long> done) implements Command {
    }

    private record ClearBuffer() implements Command {
    }

    private record AnswerDeferred(CompletableFuture<Long> done) implements Command {
    }

    private record Stop() implements Command {
    }

    private record Entry(long seq, byte[] payload) {
    }

    private record DeferredRequest(byte[] identity, long start, List<Entry> snapshot) {
    }

    private final Options options;
    private final EngineEventEncoder encoder;
    private final byte[] topic;
    private final ZContext context = new ZContext(1);
    private final BlockingQueue<Command> commands = new LinkedBlockingQueue<>();
    private final Thread thread;
    private final CompletableFuture<String[]> bound = new CompletableFuture<>();

    // engine state: guarded by this
    private long nextSeq;
    private int dropLive;
    private final Map<Holder, Set<Long>> held = new HashMap<>();

    // replay fault controls, read by the publisher thread
    private volatile boolean silentReplay;
    private volatile boolean deferReplays;
    private final AtomicInteger replayRequests = new AtomicInteger();
    private final AtomicInteger invalidReplayRequests = new AtomicInteger();
    private final AtomicInteger deferredPending = new AtomicInteger();
    private final AtomicInteger subscriptions = new AtomicInteger();
    private final AtomicLong lastReplayStart = new AtomicLong(-1);

    // publisher-thread state
    private final ArrayDeque<Entry> buffer = new ArrayDeque<>();
    private final List<DeferredRequest> deferred = new ArrayList<>();

    private String endpoint;
    private String replayEndpoint;

    private EngineSimulator(Options options) {
        this.options = options;
        this.encoder = new EngineEventEncoder(options.format(), options.hashMode());
        this.topic = options.topic().getBytes(StandardCharsets.UTF_8);
        this.nextSeq = options.startSeq();
        this.thread = new Thread(this::run, "engine-sim-publisher");
        this.thread.setDaemon(true);
    }

    /** Binds the sockets and starts the publisher thread; returns once both are bound. */
    public static EngineSimulator start(Options options) {
        EngineSimulator sim = new EngineSimulator(options);
        sim.thread.start();
        try {
            String[] endpoints = sim.bound.get(30, TimeUnit.SECONDS);
            sim.endpoint = endpoints[0];
            sim.replayEndpoint = endpoints[1];
            return sim;
        } catch (ExecutionException e) {
            sim.close();
            throw new IllegalStateException("engine simulator could not bind: " + e.getCause().getMessage(),
                    e.getCause());
        } catch (Exception e) {
            sim.close();
            throw new IllegalStateException("engine simulator did not start", e);
        }
    }

    public Options options() {
        return options;
    }

    /** The bound PUB endpoint, connectable from this host (wildcard hosts become 127.0.0.1). */
    public String endpoint() {
        return endpoint;
    }

    /** The bound replay ROUTER endpoint, connectable from this host; null when replay is off. */
    public String replayEndpoint() {
        return replayEndpoint;
    }

    // ---- publishing ------------------------------------------------------------------------------------

    public CompletableFuture<Long> publish(SimEvent... events) {
        return publish(List.of(events));
    }

    /** Publishes one batch stamped with this publisher's dp rank; the future completes with its seq once sent. */
    public CompletableFuture<Long> publish(List<SimEvent> events) {
        return publishWithRank(options.dpRank(), events);
    }

    /** Publishes one batch carrying {@code dpRank} (null writes nil, so the subscriber's registered rank applies). */
    public synchronized CompletableFuture<Long> publishWithRank(Integer dpRank, List<SimEvent> events) {
        double ts = options.fixedTs() != null ? options.fixedTs() : System.currentTimeMillis() / 1000.0;
        byte[] payload = encoder.encode(ts, events, dpRank);
        // a nil rank, or none at all (v0.9.0), leaves the subscriber with its registered rank: ours
        boolean rankOnWire = dpRank != null && options.format() != Format.ARRAY6;
        applyToGroundTruth(rankOnWire ? dpRank : options.dpRank(), events);
        return publishPayload(payload);
    }

    /**
     * Sends (and buffers for replay) a payload as it is, under the next seq: an engine emitting bytes the
     * subscriber cannot decode. The ground truth is not changed.
     */
    public synchronized CompletableFuture<Long> publishPayload(byte[] payload) {
        long seq = nextSeq++;
        boolean live = dropLive == 0;
        if (!live) {
            dropLive--;
        }
        CompletableFuture<Long> done = new CompletableFuture<>();
        commands.add(new Send(seq, payload, live, done));
        return done;
    }

    /** Convenience builder: BlockStored (see {@link SimEvent#stored}). */
    public static SimEvent.Stored stored(long[] hashes, Long parent, int[] tokens, int blockSize, String medium,
                                         String loraName) {
        return SimEvent.stored(hashes, parent, tokens, blockSize, medium, loraName);
    }

    public static SimEvent.Removed removed(long[] hashes, String medium) {
        return SimEvent.removed(hashes, medium);
    }

    public static SimEvent.Cleared cleared() {
        return SimEvent.cleared();
    }

    /** The chained engine hashes this simulator invents for the full blocks of {@code tokens}. */
    public static long[] sequenceHashes(int[] tokens, int blockSize, String loraName) {
        return SequenceHasher.sequenceHashes(BlockHasher.localHashes(tokens, blockSize, BlockHasher.seed(loraName)));
    }

    public CompletableFuture<Long> storeSequence(int[] tokens, int blockSize) {
        return storeSequence(tokens, blockSize, "GPU", null);
    }

    /**
     * Like vLLM's block pool after a prefill: cuts the full blocks of {@code tokens}, finds the longest prefix
     * this rank already holds on that medium's tier and emits one BlockStored for the rest, chained to the last
     * held block. The future completes with the batch's seq, or with null when every block was already held.
     */
    public synchronized CompletableFuture<Long> storeSequence(int[] tokens, int blockSize, String medium,
                                                              String loraName) {
        long[] hashes = sequenceHashes(tokens, blockSize, loraName);
        Set<Long> have = held.getOrDefault(new Holder(options.dpRank(), tier(options.format(), medium)), Set.of());
        int first = 0;
        while (first < hashes.length && have.contains(hashes[first])) {
            first++;
        }
        if (first == hashes.length) {
            return CompletableFuture.completedFuture(null);
        }
        long[] fresh = Arrays.copyOfRange(hashes, first, hashes.length);
        int[] freshTokens = Arrays.copyOfRange(tokens, first * blockSize, hashes.length * blockSize);
        Long parent = first == 0 ? null : hashes[first - 1];
        return publish(stored(fresh, parent, freshTokens, blockSize, medium, loraName));
    }

    /** Sends frames as they are, without a seq of its own (malformed-input tests). */
    public CompletableFuture<Long> sendRaw(byte[]... frames) {
        CompletableFuture<Long> done = new CompletableFuture<>();
        commands.add(new Raw(List.of(frames), done));
        return done;
    }

    // ---- fault controls --------------------------------------------------------------------------------

    /** Advances the sequence by {@code n} without sending or buffering anything: a gap replay cannot fill. */
    public synchronized void skip(int n) {
        nextSeq += n;
    }

    /** The next {@code n} batches are encoded and buffered for replay but not sent live: a gap replay fills. */
    public synchronized void dropLive(int n) {
        dropLive += n;
    }

    /** Behaves like a new engine process: seq back to 0, replay buffer and cache empty, no event sent. */
    public synchronized void restart() {
        nextSeq = 0;
        dropLive = 0;
        held.clear();
        commands.add(new ClearBuffer());
    }

    /** When on, the ROUTER reads replay requests and never answers them. */
    public void silentReplay(boolean on) {
        silentReplay = on;
    }

    /**
     * When on, replay requests are held (with the buffer as it was on arrival) until
     * {@link #releaseDeferredReplays()}, while live publishing goes on: lets a test put live batches on the wire
     * while a subscriber waits for its replay.
     */
    public void deferReplays(boolean on) {
        deferReplays = on;
    }

    /** Answers every held replay request; the future completes with how many were answered. */
    public CompletableFuture<Long> releaseDeferredReplays() {
        CompletableFuture<Long> done = new CompletableFuture<>();
        commands.add(new AnswerDeferred(done));
        return done;
    }

    public int deferredReplayRequests() {
        return deferredPending.get();
    }

    /** Valid replay requests received so far (answered, deferred or ignored because silent). */
    public int replayRequests() {
        return replayRequests.get();
    }

    /** The start seq of the last valid replay request; -1 before any. */
    public long lastReplayStart() {
        return lastReplayStart.get();
    }

    /**
     * Subscriptions received so far (one per subscriber connection and topic). A subscriber counted here
     * receives every batch sent afterwards: tests wait for it instead of sleeping past the slow-joiner window.
     */
    public int subscriptions() {
        return subscriptions.get();
    }

    public int invalidReplayRequests() {
        return invalidReplayRequests.get();
    }

    public synchronized long nextSeq() {
        return nextSeq;
    }

    // ---- ground truth ----------------------------------------------------------------------------------

    /** The engine hashes this (dp rank, tier) currently holds: stored minus removed minus cleared. */
    public synchronized Set<Long> held(int dpRank, StorageTier tier) {
        return Set.copyOf(held.getOrDefault(new Holder(dpRank, tier), Set.of()));
    }

    /** Every non-empty (dp rank, tier) and what it holds. */
    public synchronized Map<Holder, Set<Long>> groundTruth() {
        Map<Holder, Set<Long>> copy = new HashMap<>();
        held.forEach((k, v) -> {
            if (!v.isEmpty()) {
                copy.put(k, Set.copyOf(v));
            }
        });
        return copy;
    }

    private void applyToGroundTruth(int dpRank, List<SimEvent> events) {
        for (SimEvent e : events) {
            SimEvent event = e instanceof SimEvent.Shaped s ? s.event() : e;
            Format shape = e instanceof SimEvent.Shaped s ? s.format() : options.format();
            switch (event) {
                case SimEvent.Stored s -> {
                    Set<Long> set = held.computeIfAbsent(new Holder(dpRank, tier(shape, s.medium())),
                            k -> new HashSet<>());
                    for (long h : s.hashes()) {
                        set.add(h);
                    }
                }
                case SimEvent.Removed r -> {
                    Set<Long> set = held.get(new Holder(dpRank, tier(shape, r.medium())));
                    if (set != null) {
                        for (long h : r.hashes()) {
                            set.remove(h);
                        }
                    }
                }
                case SimEvent.Cleared c -> held.keySet().removeIf(h -> h.dpRank() == dpRank);
                case SimEvent.Unknown u -> {
                }
                case SimEvent.Shaped s -> throw new IllegalArgumentException("nested Shaped event");
            }
        }
    }

    /** The tier a subscriber can know: v0.9.0 events carry no medium, so they land on the device tier. */
    private static StorageTier tier(Format shape, String medium) {
        return StorageTier.fromMedium(shape == Format.ARRAY6 ? null : medium);
    }

    // ---- publisher thread ------------------------------------------------------------------------------

    private void run() {
        ZMQ.Socket pub = null;
        ZMQ.Socket router = null;
        try {
            // XPUB sends exactly like vLLM's PUB; it also lets us see subscriptions arrive (a test barrier)
            pub = context.createSocket(SocketType.XPUB);
            pub.setXpubVerbose(true);
            pub.setLinger(0);
            pub.setSndHWM(options.hwm());
            bind(pub, options.endpoint());
            String replay = null;
            if (options.replayEndpoint() != null) {
                router = context.createSocket(SocketType.ROUTER);
                router.setLinger(0);
                router.setSndHWM(0); // a replay of the whole buffer must never be cut by the HWM
                bind(router, options.replayEndpoint());
                replay = connectable(router.getLastEndpoint());
            }
            bound.complete(new String[] {connectable(pub.getLastEndpoint()), replay});
        } catch (RuntimeException e) {
            bound.completeExceptionally(e);
            closeQuietly(pub);
            closeQuietly(router);
            return;
        }
        try {
            loop(pub, router);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            closeQuietly(pub);
            closeQuietly(router);
        }
    }

    private void loop(ZMQ.Socket pub, ZMQ.Socket router) throws InterruptedException {
        while (true) {
            readSubscriptions(pub);
            if (router != null) {
                serveReplayRequest(router);
            }
            Command command = commands.poll(10, TimeUnit.MILLISECONDS);
            if (command == null) {
                continue;
            }
            switch (command) {
                case Send s -> {
                    if (s.live()) {
                        pub.sendMore(topic);
                        pub.sendMore(seqBytes(s.seq()));
                        pub.send(s.payload());
                    }
                    if (buffer.size() == options.bufferSteps()) {
                        buffer.removeFirst();
                    }
                    buffer.addLast(new Entry(s.seq(), s.payload()));
                    s.done().complete(s.seq());
                }
                case Raw r -> {
                    for (int i = 0; i < r.frames().size(); i++) {
                        byte[] frame = r.frames().get(i);
                        if (i < r.frames().size() - 1) {
                            pub.sendMore(frame);
                        } else {
                            pub.send(frame);
                        }
                    }
                    r.done().complete((long) r.frames().size());
                }
                case ClearBuffer c -> buffer.clear();
                case AnswerDeferred a -> {
                    long n = deferred.size();
                    if (router != null) {
                        for (DeferredRequest d : deferred) {
                            answer(router, d.identity(), d.start(), d.snapshot());
                        }
                    }
                    deferred.clear();
                    deferredPending.set(0);
                    a.done().complete(n);
                }
                case Stop s -> {
                    return;
                }
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

    private void serveReplayRequest(ZMQ.Socket router) {
        byte[] identity = router.recv(ZMQ.DONTWAIT);
        if (identity == null) {
            return;
        }
        List<byte[]> frames = new ArrayList<>();
        frames.add(identity);
        while (router.hasReceiveMore()) {
            frames.add(router.recv(0));
        }
        if (frames.size() != 3) {
            invalidReplayRequests.incrementAndGet();
            LOG.log(System.Logger.Level.WARNING, "Invalid replay request: {0} frames", frames.size());
            return;
        }
        long start = 0;
        for (byte b : frames.get(2)) {
            start = (start << 8) | (b & 0xff);
        }
        replayRequests.incrementAndGet();
        lastReplayStart.set(start);
        if (silentReplay) {
            return;
        }
        if (deferReplays) {
            deferred.add(new DeferredRequest(identity, start, List.copyOf(buffer)));
            deferredPending.incrementAndGet();
            return;
        }
        answer(router, identity, start, buffer);
    }

    private void answer(ZMQ.Socket router, byte[] identity, long start, Iterable<Entry> entries) {
        boolean withTopic = options.replayLayout() == ReplayLayout.WITH_TOPIC;
        for (Entry e : entries) {
            if (Long.compareUnsigned(e.seq(), start) < 0) {
                continue;
            }
            router.sendMore(identity);
            router.sendMore(EMPTY);
            if (withTopic) {
                router.sendMore(topic);
            }
            router.sendMore(seqBytes(e.seq()));
            router.send(e.payload());
        }
        router.sendMore(identity);
        router.sendMore(EMPTY);
        if (withTopic) {
            router.sendMore(EMPTY);
        }
        router.sendMore(END_SEQ);
        router.send(EMPTY);
    }

    static byte[] seqBytes(long seq) {
        byte[] b = new byte[8];
        for (int i = 0; i < 8; i++) {
            b[i] = (byte) (seq >>> (56 - 8 * i));
        }
        return b;
    }

    private static void bind(ZMQ.Socket socket, String endpoint) {
        if (!socket.bind(endpoint)) {
            throw new IllegalStateException("cannot bind " + endpoint);
        }
    }

    private static String connectable(String lastEndpoint) {
        return lastEndpoint.replace("tcp://0.0.0.0:", "tcp://127.0.0.1:").replace("tcp://*:", "tcp://127.0.0.1:");
    }

    private static void closeQuietly(ZMQ.Socket socket) {
        if (socket != null) {
            try {
                socket.close();
            } catch (RuntimeException ignored) {
                // closing on shutdown; nothing to do
            }
        }
    }

    /** Stops the publisher thread and closes the sockets (linger 0, no end-of-stream message, like vLLM). */
    @Override
    public void close() {
        commands.add(new Stop());
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        context.close();
    }
}

package io.kvindexer.indexer.sim;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.hash.BlockHasher;
import io.kvindexer.indexer.hash.SequenceHasher;
import io.kvindexer.indexer.sim.EngineEventEncoder.Format;
import io.kvindexer.indexer.sim.EngineEventEncoder.HashMode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.zeromq.ZContext;

/**
 * A vLLM-compatible KV-event publisher (see {@code docs/compatibility.md}, "Engine event streams"): a PUB
 * socket, an optional replay ROUTER, one publisher thread that owns both ({@link SimPublisher}), a per-batch
 * sequence number, a ring buffer of past batches for replay ({@link ReplayRouter}) and the engine's state
 * ({@link GroundTruth}).
 *
 * <p>Engine state (sequence numbers, what each (dp rank, tier) holds) changes when a batch is submitted, in
 * submission order; the publisher thread only does socket I/O, in the same order. So after
 * {@code publish(...)} returns, {@link #held} already reflects the batch, and after its future completes the
 * batch is in the PUB socket's queue: ZeroMQ's I/O thread writes it soon after, at most 8 KB at a time (a test
 * that needs it at a subscriber waits for another subscriber to have it). The fault controls ({@link #skip},
 * {@link #dropLive}, {@link #restart}, {@link #pause}, {@link #silentReplay}, {@link #deferReplays}, {@link #sendRaw}) exist to
 * test subscribers.
 */
public final class EngineSimulator implements AutoCloseable {

    /** How replay replies are framed. */
    public enum ReplayLayout {
        /** vLLM ≥ 0.26: {@code [id, "", topic, seq, payload]}, end {@code [id, "", "", ff×8, ""]}. */
        WITH_TOPIC,
        /** vLLM ≤ 0.25 and SGLang: {@code [id, "", seq, payload]}, end {@code [id, "", ff×8, ""]}. */
        LEGACY
    }

    /** One (dp rank, tier) of the engine: the ground-truth key. */
    public record Holder(int dpRank, StorageTier tier) {}

    /**
     * The replay ROUTER's counters.
     *
     * @param requests        valid replay requests received (answered, deferred or ignored because silent)
     * @param invalidRequests requests that were not {@code ["", seq]}
     * @param deferredRequests requests held by {@link #deferReplays} and not yet answered
     * @param lastStart       the start seq of the last valid request; -1 before any
     * @param repliesDropped  replies (end markers included) dropped because they did not fit in the client's queue
     * @param starts          the start seqs of the valid requests, in order (the first 1,000)
     */
    public record ReplayCounts(
            int requests,
            int invalidRequests,
            int deferredRequests,
            long lastStart,
            long repliesDropped,
            List<Long> starts) {}

    /**
     * Configuration knobs; make them with {@link #builder()} ({@link SimulatorBuilder}).
     *
     * @param endpoint       PUB bind address; {@code tcp://127.0.0.1:*} picks a free port
     * @param replayEndpoint ROUTER bind address; null disables replay
     * @param fixedTs        a fixed batch timestamp for golden tests; null uses the wall clock
     * @param context        the ZeroMQ context to make the sockets from; null: the simulator's own
     */
    public record Options(
            String endpoint,
            String replayEndpoint,
            int dpRank,
            String topic,
            int bufferSteps,
            int hwm,
            Format format,
            HashMode hashMode,
            ReplayLayout replayLayout,
            long startSeq,
            Double fixedTs,
            ZContext context) {

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
            return builder().build();
        }

        public static SimulatorBuilder builder() {
            return new SimulatorBuilder();
        }
    }

    private final Options options;
    private final EngineEventEncoder encoder;
    private final ReplayRouter replay;
    private final SimPublisher publisher;
    private String endpoint;
    private String replayEndpoint;

    // engine state: guarded by this
    private long nextSeq;
    private int dropLive;
    private final GroundTruth truth;

    private EngineSimulator(Options options) {
        this.options = options;
        this.encoder = new EngineEventEncoder(options.format(), options.hashMode());
        byte[] topic = options.topic().getBytes(StandardCharsets.UTF_8);
        this.replay = new ReplayRouter(options.bufferSteps(), options.replayLayout(), topic);
        this.publisher = new SimPublisher(options, replay, topic);
        this.truth = new GroundTruth(options.format());
        this.nextSeq = options.startSeq();
    }

    /** Binds the sockets and starts the publisher thread; returns once both are bound. */
    public static EngineSimulator start(Options options) {
        EngineSimulator sim = new EngineSimulator(options);
        String[] endpoints = sim.publisher.start();
        sim.endpoint = endpoints[0];
        sim.replayEndpoint = endpoints[1];
        return sim;
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
        truth.apply(rankOnWire ? dpRank : options.dpRank(), events);
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
        publisher.submit(new SimPublisher.Send(seq, payload, live, done));
        return done;
    }

    /** BlockStored (see {@link SimEvent#stored}). */
    public static SimEvent.Stored stored(
            long[] hashes, Long parent, int[] tokens, int blockSize, String medium, String loraName) {
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
    public synchronized CompletableFuture<Long> storeSequence(
            int[] tokens, int blockSize, String medium, String loraName) {
        long[] hashes = sequenceHashes(tokens, blockSize, loraName);
        int first = truth.heldPrefix(options.dpRank(), medium, hashes);
        if (first == hashes.length) {
            return CompletableFuture.completedFuture(null);
        }
        int[] freshTokens = Arrays.copyOfRange(tokens, first * blockSize, hashes.length * blockSize);
        Long parent = first == 0 ? null : hashes[first - 1];
        return publish(stored(GroundTruth.tail(hashes, first), parent, freshTokens, blockSize, medium, loraName));
    }

    /** The chained engine hashes this simulator invents for the EAGLE blocks of {@code tokens} (base model). */
    public static long[] eagleSequenceHashes(int[] tokens, int blockSize) {
        return SequenceHasher.sequenceHashes(BlockHasher.localHashes(tokens, blockSize, true, BlockHasher.seed(null)));
    }

    /**
     * Like SGLang's radix cache with EAGLE speculative decoding after a prefill: its keys are bigrams, so a prompt of
     * n tokens fills {@code floor((n - 1) / blockSize)} pages; the pages this rank does not hold yet are each one
     * {@code BlockStored} of {@code blockSize} pairs {@code [t_j, t_j+1]}, chained to the page before, all in one
     * batch (SGLang's {@code _record_store_event}). The future completes with the batch's seq, or with null when
     * every page was already held.
     */
    public synchronized CompletableFuture<Long> storeEagleSequence(int[] tokens, int blockSize, String medium) {
        long[] hashes = eagleSequenceHashes(tokens, blockSize);
        int first = truth.heldPrefix(options.dpRank(), medium, hashes);
        if (first == hashes.length) {
            return CompletableFuture.completedFuture(null);
        }
        List<SimEvent> pages = new ArrayList<>();
        for (int page = first; page < hashes.length; page++) {
            int[] pairs = Arrays.copyOfRange(tokens, page * blockSize, (page + 1) * blockSize + 1);
            Long parent = page == 0 ? null : hashes[page - 1];
            pages.add(new SimEvent.Stored(
                    new long[] {hashes[page]}, parent, pairs, blockSize, medium, null, null, null, true));
        }
        return publish(pages);
    }

    /** Sends frames as they are, without a seq of its own (malformed-input tests). */
    public CompletableFuture<Long> sendRaw(byte[]... frames) {
        CompletableFuture<Long> done = new CompletableFuture<>();
        publisher.submit(new SimPublisher.Raw(List.of(frames), done));
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
        truth.clear();
        publisher.submit(new SimPublisher.ClearBuffer());
    }

    /**
     * The publisher thread stops for {@code millis}, as a stalled engine process would: nothing is sent live and no
     * replay request is answered meanwhile; what is published during the pause goes out after it, in order (the
     * engine state changes at once, as before).
     */
    public void pause(long millis) {
        publisher.submit(new SimPublisher.Pause(millis));
    }

    /** When on, the ROUTER reads replay requests and never answers them. */
    public void silentReplay(boolean on) {
        replay.silent = on;
    }

    /**
     * When on, replay requests are held (with the buffer as it was on arrival) until
     * {@link #releaseDeferredReplays()}, while live publishing goes on: lets a test put live batches on the wire
     * while a subscriber waits for its replay.
     */
    public void deferReplays(boolean on) {
        replay.defer = on;
    }

    /** Answers every held replay request; the future completes with how many were answered. */
    public CompletableFuture<Long> releaseDeferredReplays() {
        CompletableFuture<Long> done = new CompletableFuture<>();
        publisher.submit(new SimPublisher.AnswerDeferred(done));
        return done;
    }

    /**
     * Cuts the next replay answer the way a full ROUTER queue does, but deterministically: its first {@code keep}
     * batch replies go out, the {@code drop} after them are dropped, the rest go out, and the end marker only when
     * {@code endMarker}.
     */
    public void cutNextReplay(int keep, int drop, boolean endMarker) {
        replay.nextCut.set(new ReplayRouter.Cut(keep, drop, endMarker));
    }

    /** What the replay ROUTER has been asked, and has dropped, so far. */
    public ReplayCounts replays() {
        return replay.counts();
    }

    /**
     * Subscriptions received so far (one per subscriber connection and topic). A subscriber counted here
     * receives every batch sent afterwards: tests wait for it instead of sleeping past the slow-joiner window.
     */
    public int subscriptions() {
        return publisher.subscriptions.get();
    }

    public synchronized long nextSeq() {
        return nextSeq;
    }

    // ---- ground truth ----------------------------------------------------------------------------------

    /** The engine hashes this (dp rank, tier) currently holds: stored minus removed minus cleared. */
    public synchronized Set<Long> held(int dpRank, StorageTier tier) {
        return truth.held(dpRank, tier);
    }

    /** Every non-empty (dp rank, tier) and what it holds. */
    public synchronized Map<Holder, Set<Long>> groundTruth() {
        return truth.snapshot();
    }

    /** Stops the publisher thread and closes the sockets (linger 0, no end-of-stream message, like vLLM). */
    @Override
    public void close() {
        publisher.stop();
    }
}

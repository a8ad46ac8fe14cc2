package io.kvindexer.indexer.event;

import static io.kvindexer.indexer.event.Msgpack.TS;
import static io.kvindexer.indexer.event.Msgpack.batch;
import static io.kvindexer.indexer.event.Msgpack.list;
import static io.kvindexer.indexer.event.Msgpack.map;
import static io.kvindexer.indexer.event.Msgpack.mapRemoved;
import static io.kvindexer.indexer.event.Msgpack.pack;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.TestResources;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.index.IndexOptions;
import io.kvindexer.indexer.index.IndexWriters;
import io.kvindexer.indexer.index.MatchResult;
import io.kvindexer.indexer.index.ModelIndex;
import io.kvindexer.indexer.ingest.BatchSink;
import io.kvindexer.indexer.ingest.EngineListener;
import io.kvindexer.indexer.ingest.IngestMetrics;
import io.kvindexer.indexer.ingest.ListenerOptions;
import io.kvindexer.indexer.ingest.ListenerSpec;
import io.kvindexer.indexer.ingest.ListenerStatus;
import io.kvindexer.indexer.ingest.SequenceWatermark;
import io.kvindexer.indexer.registry.IndexSink;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * Each current stream kind over real ZeroMQ: a PUB socket sends the engine's frames, a real {@link EngineListener}
 * decodes them into a real {@link ModelIndex}, and the index's answers show what was (and was not) indexed.
 */
class EngineStreamsOverZmqTest {

    private static final int BLOCK = 4;
    private static final Duration PATIENCE = Duration.ofSeconds(60);
    private static final String HEX64 = "00000000000000aa" + "b".repeat(48);

    @RegisterExtension
    final TestResources resources = new TestResources();

    // closed last: the listeners and sockets added later close first
    private final ZContext context = resources.add(new ZContext());
    private final IndexWriters writers = resources.add(new IndexWriters(2));
    private final ModelIndex index = new ModelIndex("m", "default", BLOCK, IndexOptions.defaults(), writers);
    private final Map<String, Long> warnings = new ConcurrentHashMap<>();

    /** An engine's PUB side (XPUB, so the test knows when the listener's subscription arrived). */
    private final class Publisher implements AutoCloseable {
        final ZMQ.Socket socket = context.createSocket(SocketType.XPUB);
        final String endpoint;
        final WatermarkedListener listener;
        long seq;

        Publisher(long instanceId, long firstSeq) {
            socket.setLinger(0);
            int port = socket.bindToRandomPort("tcp://127.0.0.1");
            endpoint = "tcp://127.0.0.1:" + port;
            seq = firstSeq;
            listener = new WatermarkedListener(instanceId, endpoint);
            resources.add(this);
            awaitSubscribed();
        }

        /** jeromq now and then stalls a fresh connection: a listener not subscribed in 10 s gets a new socket. */
        private void awaitSubscribed() {
            for (int attempt = 1; attempt <= 5; attempt++) {
                socket.setReceiveTimeOut(10_000);
                byte[] subscription = socket.recv();
                if (subscription != null) {
                    await().atMost(PATIENCE).until(() -> listener.listener.status() == ListenerStatus.ACTIVE);
                    return;
                }
                listener.listener.pause();
                listener.listener.resume();
            }
            throw new AssertionError("the listener never subscribed to " + endpoint);
        }

        /** Sends {@code [topic, seq, payload]} and waits until the listener applied it. */
        void publish(byte[] payload) {
            long s = seq++;
            socket.sendMore("kv@test".getBytes(StandardCharsets.UTF_8));
            socket.sendMore(ByteBuffer.allocate(8).putLong(s).array());
            socket.send(payload);
            await().atMost(PATIENCE).until(() -> listener.watermark.get() == s);
            index.flush().join();
        }

        /** One batch of dp rank 0 holding {@code events}, published as {@link #publish} does. */
        void publishEvents(Object... events) {
            publish(batch(0L, events));
        }

        @Override
        public void close() {
            socket.close();
        }
    }

    private final class WatermarkedListener {
        final SequenceWatermark watermark = new SequenceWatermark();
        final EngineListener listener;

        WatermarkedListener(long instanceId, String endpoint) {
            BatchSink sink = new IndexSink(index);
            IngestMetrics metrics = new IngestMetrics() {
                @Override
                public void eventWarning(String kind, int count) {
                    warnings.merge(kind, (long) count, Long::sum);
                }
            };
            listener = resources.listener(
                    new ListenerSpec(instanceId, 0, endpoint, null),
                    watermark,
                    sink,
                    ListenerOptions.defaults().with(o -> o.metrics = metrics));
        }
    }

    private static List<Object> tokens(int from, int count) {
        return IntStream.range(from, from + count)
                .mapToObj(i -> (Object) (long) i)
                .toList();
    }

    private static int[] ints(int from, int count) {
        return IntStream.range(from, from + count).toArray();
    }

    private MatchResult.WorkerMatch match(long instanceId, int[] tokens) {
        return match(instanceId, tokens, null);
    }

    /** The match of a query with {@code loraName} (null: the base model). */
    private MatchResult.WorkerMatch match(long instanceId, int[] tokens, String loraName) {
        return index.findMatches(index.localHashes(tokens, loraName, null)).workers().stream()
                .filter(m -> m.worker().equals(new WorkerKey(instanceId, 0)))
                .findFirst()
                .orElse(new MatchResult.WorkerMatch(new WorkerKey(instanceId, 0), 0, 0, 0));
    }

    private static Map<String, Object> mapStored(
            List<Object> hashes, Object parent, List<Object> tokens, Object... extra) {
        List<Object> kv = new ArrayList<>(List.of(
                "type",
                "BlockStored",
                "block_hashes",
                hashes,
                "token_ids",
                tokens,
                "block_size",
                (long) BLOCK,
                "medium",
                "GPU"));
        kv.add("parent_block_hash");
        kv.add(parent);
        kv.addAll(java.util.Arrays.asList(extra));
        return map(kv.toArray());
    }

    /**
     * An engine keeps an adapter's KV blocks apart from the base model's even for equal tokens. vLLM before
     * {@code lora_name} names the adapter only by {@code lora_id}: those blocks must not answer a base-model query
     * (they did, hashed as the base model's), nor a query for another adapter.
     */
    @Test
    void adapterBlocksOfEqualTokensNeverAnswerTheBaseModel() {
        Publisher base = new Publisher(1, 0);
        Publisher oldVllm = new Publisher(2, 0);
        Publisher mapById = new Publisher(3, 0);
        Publisher named = new Publisher(4, 0);
        Publisher zeroId = new Publisher(5, 0);
        base.publishEvents(mapStored(list(11L, 12L), null, tokens(1, 8), "lora_id", null, "lora_name", null));
        // vLLM 0.9's positional store: [tag, hashes, parent, tokens, block_size, lora_id, medium]
        oldVllm.publishEvents(list("BlockStored", list(21L, 22L), null, tokens(1, 8), (long) BLOCK, 1L, "GPU"));
        mapById.publishEvents(mapStored(list(31L, 32L), null, tokens(1, 8), "lora_id", 2L));
        named.publishEvents(mapStored(list(41L, 42L), null, tokens(1, 8), "lora_id", 1L, "lora_name", "sql"));
        zeroId.publishEvents(mapStored(list(51L, 52L), null, tokens(1, 8), "lora_id", 0L));
        assertThat(index.stats().memberships()).isEqualTo(10);

        int[] prompt = ints(1, 8);
        assertThat(match(1, prompt).deviceBlocks()).isEqualTo(2);
        assertThat(match(5, prompt).deviceBlocks())
                .as("lora_id 0 is no adapter")
                .isEqualTo(2);
        for (long adapter : new long[] {2, 3, 4}) {
            assertThat(match(adapter, prompt).deviceBlocks())
                    .as("worker %d's adapter blocks for a base-model query", adapter)
                    .isZero();
        }
        assertThat(match(4, prompt, "sql").deviceBlocks()).isEqualTo(2);
        for (long other : new long[] {1, 2, 3, 5}) {
            assertThat(match(other, prompt, "sql").deviceBlocks())
                    .as("worker %d for adapter sql", other)
                    .isZero();
        }
    }

    @Test
    void vllmHybridModelWithLocalityAndOwnership() {
        Publisher engine = new Publisher(1, 0);
        engine.publishEvents(
                mapStored(
                        list(11L, 12L),
                        null,
                        tokens(1, 8),
                        "group_idx",
                        0L,
                        "kv_cache_spec_kind",
                        "full_attention",
                        "extra_keys",
                        list(null, null)),
                // the sliding-window group of the same request: its own hashes, not prefix state
                mapStored(
                        list(21L, 22L),
                        null,
                        tokens(1, 8),
                        "group_idx",
                        1L,
                        "kv_cache_spec_kind",
                        "sliding_window",
                        "kv_cache_spec_sliding_window",
                        4096L),
                mapStored(list(31L), null, tokens(100, 4), "locality", "REMOTE", "medium", "STORAGE"),
                mapStored(list(41L), null, tokens(200, 4), "ownership", "kvcr"));
        engine.publishEvents(
                mapRemoved(list(21L), "medium", "GPU", "group_idx", 1L),
                map("type", "AllBlocksCleared", "ownership", "kvcr"));

        assertThat(match(1, ints(1, 8)).deviceBlocks()).isEqualTo(2);
        assertThat(match(1, ints(100, 4)).diskBlocks())
                .as("a remote copy is not this engine's")
                .isZero();
        assertThat(match(1, ints(200, 4)).deviceBlocks()).isZero();
        assertThat(index.stats().memberships())
                .as("only the full-attention chain")
                .isEqualTo(2);
        assertThat(warnings)
                .containsEntry("skipped_cache_group", 2L)
                .containsEntry("non_local", 1L)
                .containsEntry("ownership", 2L);

        engine.publishEvents(list("AllBlocksCleared"));
        assertThat(index.stats().memberships()).isZero();
    }

    @Test
    void tensorRtLlmStreamingStoreWithMmKeysAndStringTokens() {
        Publisher engine = new Publisher(2, 0);
        List<Object> tokens = new ArrayList<>(tokens(1, 8));
        tokens.set(0, "1"); // token ids are int | str
        engine.publishEvents(mapStored(
                list(51L, 52L),
                null,
                tokens,
                "lora_id",
                null,
                "lora_name",
                null,
                "mm_keys",
                list(null, list(map("type", "mm_key", "hash", HEX64, "start_offset", 2L)))));
        // block 1 carries an image: a text-only query with the same tokens matches block 0 only
        assertThat(match(2, ints(1, 8)).deviceBlocks()).isEqualTo(1);
        assertThat(index.stats().memberships()).isEqualTo(2);
    }

    @Test
    void rocmAtomPositionalStoreWithTrailingTokenOffset() {
        Publisher engine = new Publisher(3, 0);
        engine.publishEvents(list(
                "BlockStored",
                list(61L, 62L),
                null,
                tokens(1, 8),
                (long) BLOCK,
                null,
                "GPU",
                null,
                null,
                0L,
                null,
                null,
                16L));
        assertThat(match(3, ints(1, 8)).deviceBlocks()).isEqualTo(2);
    }

    @Test
    void dynamoBlockMmInfosAreMixedIn() {
        Publisher engine = new Publisher(4, 0);
        engine.publishEvents(mapStored(
                list(71L, 72L),
                null,
                tokens(1, 8),
                "block_mm_infos",
                list(null, map("mm_objects", list(map("mm_hash", 99L, "offsets", list(list(0L, 4L))))))));
        assertThat(match(4, ints(1, 8)).deviceBlocks()).isEqualTo(1);
        assertThat(index.stats().memberships()).isEqualTo(2);
    }

    /** llm-d's storage publisher: {@code [ts, events]} without a rank, each event packed inside a {@code bin}. */
    private static byte[] storageBatch(List<Object> event) {
        return pack(list(TS, list((Object) pack(event))));
    }

    @Test
    void llmdSharedStorageIsIndexedWhereAnEngineMadeTheBlocksKnown() {
        Publisher engine = new Publisher(5, 0);
        engine.publishEvents(mapStored(list(81L, 82L), null, tokens(1, 8)));
        // llm-d's fs backend publishes from seq 1 and has no replay socket
        Publisher storage = new Publisher(9, 1);
        storage.publish(storageBatch(list("BlockStored", list(81L, 82L, 83L), 0L, list(), 0L, null, "SHARED_STORAGE")));

        MatchResult.WorkerMatch onStorage = match(9, ints(1, 8));
        assertThat(onStorage.deviceBlocks()).isZero();
        assertThat(onStorage.diskBlocks())
                .as("device, host, disk, then external")
                .isEqualTo(2);
        assertThat(match(5, ints(1, 8)).deviceBlocks()).isEqualTo(2);
        assertThat(index.stats().applied().get("stored")).containsEntry("unknown_storage_block", 1L);
        assertThat(index.stats().memberships())
                .as("block 83 is known to no engine: not indexed")
                .isEqualTo(4);

        storage.publish(storageBatch(list("BlockRemoved", list(82L), "SHARED_STORAGE")));
        assertThat(match(9, ints(1, 8)).diskBlocks()).isEqualTo(1);
        assertThat(storage.listener.listener.lastError()).isNull();
    }
}

package io.kvindexer.indexer.dump;

import static io.kvindexer.indexer.dump.RouterEventJsonTest.assertSameEvent;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvindexer.indexer.common.StorageTier;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The {@code /dump} document: exact output, round trips, Dynamo-shaped input, failures naming the key. */
class DumpJsonTest {

    private static RouterEvent stored(long worker, long parent, long block, long tokens) {
        return new RouterEvent(
                worker,
                0,
                StorageTier.DEVICE,
                0,
                new RouterEvent.Stored(parent != 0, parent, new long[] {block}, new long[] {tokens}));
    }

    private static String write(List<IndexDump> dumps) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        DumpJson.write(out, dumps);
        return out.toString(StandardCharsets.UTF_8);
    }

    private static List<IndexDump> read(String json) throws IOException, EventJsonException {
        return DumpJson.read(new ByteArrayInputStream(json.getBytes(StandardCharsets.UTF_8)));
    }

    private static void assertSameDumps(List<IndexDump> actual, List<IndexDump> expected) {
        assertThat(actual).hasSameSizeAs(expected);
        for (int i = 0; i < expected.size(); i++) {
            IndexDump a = actual.get(i);
            IndexDump e = expected.get(i);
            assertThat(a.modelName()).isEqualTo(e.modelName());
            assertThat(a.tenantId()).isEqualTo(e.tenantId());
            assertThat(a.blockSize()).isEqualTo(e.blockSize());
            assertThat(a.events()).hasSameSizeAs(e.events());
            for (int k = 0; k < e.events().size(); k++) {
                assertSameEvent(a.events().get(k), e.events().get(k));
            }
        }
    }

    @Test
    void writesTheDocumentExactly() throws Exception {
        IndexDump dump = new IndexDump("llama-3-8b", "default", 16, List.of(stored(1, 0, -1L, 42)));
        assertThat(write(List.of(dump)))
                .isEqualTo("{\"llama-3-8b:default\":{\"block_size\":16,"
                        + "\"model_name\":\"llama-3-8b\",\"tenant_id\":\"default\",\"events\":["
                        + "{\"worker_id\":1,\"storage_tier\":\"device\",\"event\":{\"event_id\":0,\"data\":{\"stored\":"
                        + "{\"parent_hash\":null,\"start_position\":null,\"blocks\":[{\"block_hash\":18446744073709551615,"
                        + "\"tokens_hash\":42,\"mm_extra_info\":null}]}},\"dp_rank\":0}}]}}");
        assertThat(write(List.of())).isEqualTo("{}");
        assertThat(read("{}")).isEmpty();
    }

    @Test
    void roundTripWithLargeHashesAndColonsInNames() throws Exception {
        List<IndexDump> dumps = List.of(
                new IndexDump(
                        "org/model:v1:fp8",
                        "team:a",
                        32,
                        List.of(
                                stored(Long.parseUnsignedLong("9223372036854775809"), 0, 9_007_199_254_740_993L, -2L),
                                stored(2, 9_007_199_254_740_993L, Long.MIN_VALUE, Long.MAX_VALUE))),
                new IndexDump("llama", "default", 16, List.of()));
        String json = write(dumps);
        assertThat(json)
                .contains("\"org/model:v1:fp8:team:a\":")
                .contains("9223372036854775809")
                .contains("9007199254740993")
                .doesNotContain("\"9007199254740993\"");
        assertSameDumps(read(json), dumps);
    }

    @Test
    void dynamoShapedEntriesSplitTheKeyAtTheFirstColon() throws Exception {
        List<IndexDump> dumps = read("""
                {"llama-3-8b:default": {"block_size": 16, "events": [
                   {"worker_id": 1, "storage_tier": "device", "event": {"event_id": 0, "data": {"stored":
                     {"parent_hash": null, "start_position": null,
                      "blocks": [{"block_hash": 18446744073709551615, "tokens_hash": 16863443419780771464,
                                  "mm_extra_info": null}]}}, "dp_rank": 0}}]},
                 "org:model:tenant": {"block_size": 4, "events": []}}""");
        assertThat(dumps).hasSize(2);
        assertThat(dumps.get(0).modelName()).isEqualTo("llama-3-8b");
        assertThat(dumps.get(0).tenantId()).isEqualTo("default");
        assertThat(dumps.get(0).blockSize()).isEqualTo(16);
        RouterEvent.Stored s = (RouterEvent.Stored) dumps.get(0).events().get(0).data();
        assertThat(s.blockHashes()).containsExactly(-1L);
        assertThat(s.localHashes()).containsExactly(Long.parseUnsignedLong("16863443419780771464"));
        // Dynamo's split: the model gets the part before the first ':'
        assertThat(dumps.get(1).modelName()).isEqualTo("org");
        assertThat(dumps.get(1).tenantId()).isEqualTo("model:tenant");
    }

    @Test
    void oneNameFieldPinsTheSplit() throws Exception {
        List<IndexDump> dumps = read("""
                {"org:model:tenant": {"block_size": 4, "model_name": "org:model", "events": []},
                 "a:b:c": {"block_size": 4, "tenant_id": "b:c", "events": []},
                 "nocolon": {"block_size": 4, "model_name": "m", "tenant_id": "t", "events": []}}""");
        assertThat(dumps).extracting(IndexDump::modelName).containsExactly("org:model", "a", "m");
        assertThat(dumps).extracting(IndexDump::tenantId).containsExactly("tenant", "b:c", "t");
    }

    @Test
    void g1EventsWithoutStartPosition() throws Exception {
        List<IndexDump> dumps = read("""
                {"m:t": {"events": [{"worker_id": 3, "event": {"event_id": 5, "data": {"stored":
                  {"parent_hash": 7, "blocks": [{"block_hash": 8, "tokens_hash": 9}]}}}}], "block_size": 2}}""");
        RouterEvent e = dumps.get(0).events().get(0);
        assertThat(e.instanceId()).isEqualTo(3);
        assertThat(e.tier()).isEqualTo(StorageTier.DEVICE);
        assertThat(e.dpRank()).isZero();
        RouterEvent.Stored s = (RouterEvent.Stored) e.data();
        assertThat(s.parentBlockHash()).isEqualTo(7);
        assertThat(s.blockHashes()).containsExactly(8L);
    }

    @Test
    void eventsBeforeTheirBlockSizeAreHeldUntilItIsRead() throws Exception {
        String event = "{\"worker_id\":1,\"storage_tier\":\"device\",\"event\":{\"event_id\":0,\"data\":{\"stored\":"
                + "{\"parent_hash\":null,\"blocks\":[{\"block_hash\":5,\"tokens_hash\":6}]}},\"dp_rank\":0}}";
        List<String> calls = new java.util.ArrayList<>();
        DumpJson.read(
                new java.io.ByteArrayInputStream(("{\"a:b\":{\"events\":[" + event + "," + event
                                + "],\"block_size\":8},\"c:d\":{\"block_size\":4,\"events\":[" + event + "]}}")
                        .getBytes(java.nio.charset.StandardCharsets.UTF_8)),
                new DumpJson.Entries() {
                    @Override
                    public DumpJson.EventSink begin(String key, int blockSize) {
                        calls.add("begin " + key + " " + blockSize);
                        return e -> calls.add("event " + e.instanceId());
                    }

                    @Override
                    public void end(String key, String modelName, String tenantId, int blockSize) {
                        calls.add("end " + modelName + "/" + tenantId + " " + blockSize);
                    }
                });
        assertThat(calls)
                .containsExactly(
                        "begin a:b 8", "event 1", "event 1", "end a/b 8", "begin c:d 4", "event 1", "end c/d 4");
        assertThatThrownBy(() -> read("{\"a:b\":{\"block_size\":4,\"block_size\":4,\"events\":[]}}"))
                .hasMessageContaining("block_size: given twice");
        assertThatThrownBy(() -> read("{\"a:b\":{\"block_size\":4,\"events\":[],\"events\":[]}}"))
                .hasMessageContaining("events: given twice");
    }

    @Test
    void unusableEntriesFailNamingTheKey() throws Exception {
        assertFails(
                "{\"ok:t\":{\"block_size\":1,\"events\":[]},\"bad:t\":{\"error\":\"dump timed out\"}}",
                "\"bad:t\"",
                "dump timed out");
        assertFails("{\"nocolon\":{\"block_size\":1,\"events\":[]}}", "\"nocolon\"", "':'");
        assertFails("{\"m:t\":{\"events\":[]}}", "\"m:t\"", "block_size");
        assertFails("{\"m:t\":{\"block_size\":1}}", "\"m:t\"", "events");
        assertFails("{\"m:t\":{\"block_size\":-1,\"events\":[]}}", "\"m:t\"", "block_size");
        assertFails("{\"m:t\":[]}", "\"m:t\"", "expected an object");
        assertFails("{\"m:t\":{\"block_size\":1,\"events\":[{\"worker_id\":1}]}}", "m:t.events[0].event: missing");
        assertFails("[]", "dump");
        assertFails("{\"m:t\":{\"block_size\":1,\"events\":[", "invalid JSON");

        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (DumpJson.Writer w = DumpJson.writer(out)) {
            w.entry(new IndexDump("a", "b", 1, List.of()));
            w.error("c:d", "boom");
        }
        assertThat(out.toString(StandardCharsets.UTF_8)).endsWith(",\"c:d\":{\"error\":\"boom\"}}");
        assertFails(out.toString(StandardCharsets.UTF_8), "\"c:d\"", "boom");

        // ours: a walk that failed after some events went out ends its entry with the error; refused the same way
        ByteArrayOutputStream partial = new ByteArrayOutputStream();
        try (DumpJson.Writer w = DumpJson.writer(partial)) {
            w.begin("e", "f", 1);
            w.abandon("walk failed");
        }
        assertThat(partial.toString(StandardCharsets.UTF_8))
                .isEqualTo("{\"e:f\":{\"block_size\":1,\"model_name\":\"e\",\"tenant_id\":\"f\",\"events\":[],"
                        + "\"error\":\"walk failed\"}}");
        assertFails(partial.toString(StandardCharsets.UTF_8), "\"e:f\"", "walk failed");
    }

    private static void assertFails(String json, String... parts) {
        assertThatThrownBy(() -> read(json))
                .isInstanceOf(EventJsonException.class)
                .satisfies(e -> {
                    for (String part : parts) {
                        assertThat(e.getMessage()).contains(part);
                    }
                });
    }

    @Test
    void largeDumpsStreamWithoutClosingTheCallersStreams() throws Exception {
        List<RouterEvent> events = new ArrayList<>();
        for (int i = 0; i < 50_000; i++) {
            events.add(stored(i % 7, i == 0 ? 0 : i, i + 1, -i));
        }
        IndexDump dump = new IndexDump("m", "t", 16, events);
        AtomicLong bytesBeforeEnd = new AtomicLong();
        AtomicBoolean outClosed = new AtomicBoolean();
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        OutputStream out = new OutputStream() {
            @Override
            public void write(int b) {
                sink.write(b);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                sink.write(b, off, len);
            }

            @Override
            public void close() {
                outClosed.set(true);
            }
        };
        try (DumpJson.Writer w = DumpJson.writer(out)) {
            w.entry(dump);
            bytesBeforeEnd.set(sink.size()); // the generator flushes its buffer as it goes
        }
        assertThat(bytesBeforeEnd.get()).isGreaterThan(1_000_000);
        assertThat(outClosed).isFalse();

        AtomicBoolean inClosed = new AtomicBoolean();
        InputStream in = new ByteArrayInputStream(sink.toByteArray()) {
            @Override
            public void close() {
                inClosed.set(true);
            }
        };
        List<IndexDump> back = DumpJson.read(in);
        assertThat(inClosed).isFalse();
        assertSameDumps(back, List.of(dump));
    }
}

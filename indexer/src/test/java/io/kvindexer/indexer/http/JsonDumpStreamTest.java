package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.dump.DumpJson;
import io.kvindexer.indexer.event.BlockStored;
import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.index.ModelIndex;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * The JSON {@code /dump} is written while the index is walked, a chunk at a time, not captured whole first: a client
 * that stops reading holds one chunk of the walk, and memberships added meanwhile to blocks the walk has not reached
 * yet are in the dump (the "at least" cut), which a dump captured before its first byte could not contain.
 */
class JsonDumpStreamTest {

    private static final int BLOCKS = 100_000; // about 26 MB of JSON: far more than the sockets' buffers hold

    @Test
    void aClientThatStopsReadingHoldsTheWalkNotACopyOfTheIndex() throws Exception {
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults());
                HttpClient client = HttpClient.newHttpClient()) {
            ModelIndex ix = app.indexers().getOrCreate("m", "default", 4);
            long[] hashes = LongStream.rangeClosed(1, BLOCKS).toArray();
            int[] tokens = IntStream.range(0, BLOCKS * 4).toArray();
            ix.submit(new WorkerKey(1, 0), List.<KvEvent>of(stored(hashes, tokens)));
            app.indexers().flushAll().get(60, TimeUnit.SECONDS);

            HttpResponse<InputStream> response = client.send(
                    HttpRequest.newBuilder(URI.create(app.baseUrl() + "/dump")).build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            assertThat(response.statusCode()).isEqualTo(200);
            InputStream body = response.body();
            byte[] first = body.readNBytes(64 << 10);

            // while the client reads no more, a second worker stores the same chain: the same blocks gain a holder
            ix.submit(new WorkerKey(2, 0), List.<KvEvent>of(stored(hashes, tokens)));
            app.indexers().flushAll().get(60, TimeUnit.SECONDS);

            AtomicLong events = new AtomicLong();
            AtomicLong ofWorker2 = new AtomicLong();
            AtomicLong idsInOrder = new AtomicLong();
            DumpJson.read(new SequenceInputStream(new ByteArrayInputStream(first), body), new DumpJson.Entries() {
                @Override
                public DumpJson.EventSink begin(String key, int blockSize) {
                    return e -> {
                        if (e.eventId() == events.getAndIncrement()) {
                            idsInOrder.incrementAndGet();
                        }
                        if (e.instanceId() == 2) {
                            ofWorker2.incrementAndGet();
                        }
                    };
                }

                @Override
                public void end(String key, String modelName, String tenantId, int blockSize) {}
            });
            assertThat(events.get() - ofWorker2.get())
                    .as("every block of worker 1")
                    .isEqualTo(BLOCKS);
            assertThat(idsInOrder.get())
                    .as("event ids count on across the walk's chunks")
                    .isEqualTo(events.get());
            assertThat(ofWorker2.get())
                    .as("worker 2's memberships on the blocks not yet walked when it stored them")
                    .isPositive();
        }
    }

    private static BlockStored stored(long[] hashes, int[] tokens) {
        return new BlockStored(hashes, false, 0, tokens, 4, null, StorageTier.DEVICE, null, false);
    }
}

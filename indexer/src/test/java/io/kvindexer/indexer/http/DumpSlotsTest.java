package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.common.ServiceLimits;
import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.dump.DumpJson;
import io.kvindexer.indexer.event.BlockStored;
import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.index.ModelIndex;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * {@code /dump} holds at most {@code --max-concurrent-dumps} slots (one more gets 503 with {@code Retry-After}), and a
 * client that stops reading loses its slot after {@code --dump-stall-timeout-ms}, its connection closed, instead of
 * keeping it (and what waits for it) for as long as TCP keeps the connection.
 */
class DumpSlotsTest {

    private static final int BLOCKS = 100_000; // about 26 MB of JSON: far more than the sockets' buffers hold
    private static final long PATIENCE_S = 60;

    @Test
    void oneDumpOverTheCapIsRefusedAndTheOthersComplete() throws Exception {
        IndexerConfig config = IndexerConfig.defaults()
                .with(c -> c.limits = ServiceLimits.DEFAULTS.with(l -> {
                    l.maxConcurrentDumps = 2;
                    l.dumpStallTimeout = Duration.ofMinutes(5);
                }));
        HttpClient client = client();
        try (IndexerApp app = IndexerApp.start(config)) {
            try {
                overTheCap(app, client);
            } finally {
                // shut down, not closed (close waits for the bodies a failed assertion left unread), before the
                // server stops
                client.shutdownNow();
            }
        }
    }

    private static void overTheCap(IndexerApp app, HttpClient client) throws Exception {
        fill(app);
        // two dumps under way, their clients reading nothing past the first bytes for now
        HttpResponse<InputStream> a = dump(client, app);
        HttpResponse<InputStream> b = dump(client, app);
        assertThat(a.statusCode()).isEqualTo(200);
        assertThat(b.statusCode()).isEqualTo(200);
        byte[] aFirst = a.body().readNBytes(1024);
        byte[] bFirst = b.body().readNBytes(1024);

        HttpResponse<String> third = client.send(
                HttpRequest.newBuilder(URI.create(app.baseUrl() + "/dump")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(third.statusCode()).isEqualTo(503);
        assertThat(third.headers().firstValue("Retry-After")).hasValue("5");
        assertThat(third.body()).startsWith("{\"error\":\"too many dumps in progress (2, --max-concurrent-dumps)");

        assertThat(events(aFirst, a.body())).isEqualTo(BLOCKS);
        assertThat(events(bFirst, b.body())).isEqualTo(BLOCKS);
        // their slots are back
        HttpResponse<InputStream> after = dump(client, app);
        assertThat(after.statusCode()).isEqualTo(200);
        assertThat(events(new byte[0], after.body())).isEqualTo(BLOCKS);
    }

    @Test
    void aClientThatStopsReadingLosesItsSlot() throws Exception {
        IndexerConfig config = IndexerConfig.defaults()
                .with(c -> c.limits = ServiceLimits.DEFAULTS.with(l -> {
                    l.maxConcurrentDumps = 1;
                    l.dumpStallTimeout = Duration.ofMillis(1500);
                }));
        HttpClient client = client();
        try (IndexerApp app = IndexerApp.start(config);
                Socket stalled = new Socket()) {
            try {
                stalledClient(app, client, stalled);
            } finally {
                client.shutdownNow();
            }
        }
    }

    private static void stalledClient(IndexerApp app, HttpClient client, Socket stalled) throws Exception {
        fill(app);
        stalled.setReceiveBufferSize(4096);
        stalled.connect(
                new InetSocketAddress("127.0.0.1", URI.create(app.baseUrl()).getPort()));
        stalled.setSoTimeout((int) TimeUnit.SECONDS.toMillis(PATIENCE_S));
        stalled.getOutputStream().write("GET /dump HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        InputStream in = stalled.getInputStream();
        byte[] status = in.readNBytes(12);
        assertThat(new String(status, StandardCharsets.US_ASCII)).isEqualTo("HTTP/1.1 200");

        // the stalled dump has the only slot...
        HttpResponse<String> refused = client.send(
                HttpRequest.newBuilder(URI.create(app.baseUrl() + "/dump")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(refused.statusCode()).isEqualTo(503);

        // ...until it is abandoned: then a dump is admitted again, and complete
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(PATIENCE_S);
        HttpResponse<InputStream> admitted;
        while ((admitted = dump(client, app)).statusCode() == 503 && System.nanoTime() < end) {
            admitted.body().close();
            Thread.sleep(100);
        }
        assertThat(admitted.statusCode())
                .as("a dump admitted after the stall timeout")
                .isEqualTo(200);
        assertThat(events(new byte[0], admitted.body())).isEqualTo(BLOCKS);

        // the stalled client's connection was closed before its dump's end (no last chunk)
        String rest = readUntilClosed(in);
        assertThat(rest).doesNotEndWith("\r\n0\r\n\r\n");
    }

    private static HttpClient client() {
        return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    }

    private static HttpResponse<InputStream> dump(HttpClient client, IndexerApp app)
            throws IOException, InterruptedException {
        return client.send(
                HttpRequest.newBuilder(URI.create(app.baseUrl() + "/dump")).build(),
                HttpResponse.BodyHandlers.ofInputStream());
    }

    private static void fill(IndexerApp app) throws Exception {
        ModelIndex ix = app.indexers().getOrCreate("m", "default", 4);
        long[] hashes = LongStream.rangeClosed(1, BLOCKS).toArray();
        int[] tokens = IntStream.range(0, BLOCKS * 4).toArray();
        ix.submit(
                new WorkerKey(1, 0),
                List.<KvEvent>of(new BlockStored(hashes, false, 0, tokens, 4, null, StorageTier.DEVICE, null, false)));
        app.indexers().flushAll().get(PATIENCE_S, TimeUnit.SECONDS);
    }

    /** The events of a whole JSON dump, its first bytes read already; a dump cut short fails to parse. */
    private static long events(byte[] first, InputStream rest) throws Exception {
        AtomicLong events = new AtomicLong();
        try (InputStream body = new SequenceInputStream(new ByteArrayInputStream(first), rest)) {
            DumpJson.read(body, new DumpJson.Entries() {
                @Override
                public DumpJson.EventSink begin(String key, int blockSize) {
                    return e -> events.incrementAndGet();
                }

                @Override
                public void end(String key, String modelName, String tenantId, int blockSize) {}
            });
        }
        return events.get();
    }

    /** What is left until the server closes (a reset counts as closed); the socket timeout fails a hang. */
    private static String readUntilClosed(InputStream in) {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        byte[] chunk = new byte[64 << 10];
        try {
            for (int n; (n = in.read(chunk)) >= 0; ) {
                buf.write(chunk, 0, n);
            }
        } catch (java.net.SocketTimeoutException e) {
            throw new AssertionError("the stalled dump's connection was never closed", e);
        } catch (IOException e) {
            // reset: closed
        }
        return buf.toString(StandardCharsets.ISO_8859_1);
    }
}

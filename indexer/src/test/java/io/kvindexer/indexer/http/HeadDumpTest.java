package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.dump.BinaryDump;
import io.kvindexer.indexer.event.BlockStored;
import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.index.ModelIndex;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code HEAD /dump} answers the headers its GET would without walking the index: a dump's length is known only by
 * writing it, so the answer is framed as the GET's stream is ({@code Transfer-Encoding: chunked}) and carries no
 * content, not even a terminating chunk: the next answer on the connection follows its head at once. That it does
 * not walk is seen in what the whole process allocates while it answers, against what the GET allocates.
 */
class HeadDumpTest {

    private static final int PATIENCE_MS = 60_000;
    private static final int BLOCKS = 200_000;
    private static final String NEXT = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";

    private static IndexerApp server;

    @BeforeAll
    static void start() throws Exception {
        server = IndexerApp.start(IndexerConfig.defaults());
        ModelIndex ix = server.indexers().getOrCreate("m", "default", 4);
        long[] hashes = LongStream.rangeClosed(1, BLOCKS).toArray();
        int[] tokens = IntStream.range(0, BLOCKS * 4).toArray();
        ix.submit(
                new WorkerKey(1, 0),
                List.<KvEvent>of(new BlockStored(hashes, false, 0, tokens, 4, null, StorageTier.DEVICE, null, false)));
        server.indexers().flushAll().get(60, TimeUnit.SECONDS);
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @ParameterizedTest(name = "Accept: {0}")
    @ValueSource(strings = {"application/json", BinaryDump.MEDIA_TYPE})
    void headOfABigDumpSendsItsHeadersWithoutWalkingTheIndex(String accept) throws IOException {
        String request = "/dump HTTP/1.1\r\nHost: x\r\nAccept: " + accept + "\r\n\r\n";
        try (Socket s = RawHttp.connect(server.baseUrl(), PATIENCE_MS)) {
            InputStream in = new BufferedInputStream(s.getInputStream());

            long before = allocated();
            send(s, "GET " + request);
            HeadRequestsTest.Response get = HeadRequestsTest.Response.read(in, false);
            long byGet = allocated() - before;
            assertThat(get.status()).isEqualTo(200);
            assertThat(get.header("transfer-encoding")).isEqualTo("chunked");

            // the least of three: the count is the whole process's, and other threads may allocate meanwhile
            long byHead = Long.MAX_VALUE;
            HeadRequestsTest.Response head = null;
            for (int i = 0; i < 3; i++) {
                before = allocated();
                send(s, "HEAD " + request + NEXT);
                head = HeadRequestsTest.Response.read(in, true);
                byHead = Math.min(byHead, allocated() - before);
                // no content, and no terminating chunk: the next bytes are the next request's answer
                HeadRequestsTest.Response next = HeadRequestsTest.Response.read(in, false);
                assertThat(next.status()).isEqualTo(200);
                assertThat(next.body()).isEmpty();
            }
            assertThat(byHead)
                    .as("bytes allocated by HEAD (GET: %d for %d bytes of dump)", byGet, get.body().length)
                    .isLessThan(byGet / 10);
            assertThat(head.status()).isEqualTo(200);
            assertThat(head.header("content-type")).isEqualTo(get.header("content-type"));
            assertThat(head.header(BinaryDump.BLOCKS_HEADER.toLowerCase()))
                    .isEqualTo(get.header(BinaryDump.BLOCKS_HEADER.toLowerCase()));
            assertThat(head.header("content-length"))
                    .as("no length: it is known only by writing the dump")
                    .isNull();
            assertThat(head.header("transfer-encoding")).isEqualTo("chunked");
        }
    }

    /** Bytes allocated by every thread of the process so far (the server's carriers among them). */
    private static long allocated() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getTotalThreadAllocatedBytes();
    }

    private static void send(Socket s, String request) throws IOException {
        s.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
    }
}

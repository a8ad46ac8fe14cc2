package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.TestResources;
import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Our hand-written ZMTP subscriber against a real libzmq publisher (pyzmq, as vLLM uses it), in its own process:
 * the handshake, the subscription bytes libzmq receives, frames past 255 bytes (the long size form), vLLM's
 * msgpack batches, and libzmq's heartbeats answered so the connection stays up. Needs Debian's python3 with
 * python3-zmq and python3-msgpack ({@code bin/run-tests} installs them).
 */
class LibzmqInteropTest {

    private static final Duration PATIENCE = Duration.ofSeconds(20);
    private static final long INSTANCE = 77;

    /** An engine stand-in: binds, prints its port (and, as XPUB, the subscription it got), publishes on request. */
    private static final String PUBLISHER = """
            import struct, sys, time, msgpack, zmq
            kind, heartbeat_ms = sys.argv[1], int(sys.argv[2])
            sock = zmq.Context().socket(zmq.XPUB if kind == "XPUB" else zmq.PUB)
            if heartbeat_ms:
                sock.setsockopt(zmq.HEARTBEAT_IVL, heartbeat_ms)
                sock.setsockopt(zmq.HEARTBEAT_TIMEOUT, 3 * heartbeat_ms)
            print(sock.bind_to_random_port("tcp://127.0.0.1"), flush=True)
            if kind == "XPUB":
                print(sock.recv().hex(), flush=True)
            for line in sys.stdin:
                count, pause_ms = map(int, line.split())
                for seq in range(count):
                    stored = {"type": "BlockStored", "block_hashes": [2 * seq + 1, 2 * seq + 2],
                              "parent_block_hash": None, "token_ids": list(range(200)), "block_size": 100,
                              "lora_id": None, "medium": "GPU", "lora_name": None}
                    sock.send_multipart([b"", struct.pack(">Q", seq), msgpack.packb([time.time(), [stored], 0])])
                    time.sleep(pause_ms / 1000)
                print("done", flush=True)
            """;

    @TempDir
    Path dir;

    @RegisterExtension
    final TestResources resources = new TestResources();

    private Process python;
    private EngineListener listener;

    @Test
    void aLibzmqPublisherGetsOurSubscriptionAndEveryBatchArrives() throws IOException {
        BufferedReader out = start("XPUB", 0);
        int port = Integer.parseInt(out.readLine().trim());
        RecordingSink sink = new RecordingSink(false);
        CountingMetrics metrics = new CountingMetrics();
        SequenceWatermark watermark = listen(port, sink, metrics);
        assertThat(out.readLine())
                .as("libzmq got the 3.0 subscription to everything")
                .isEqualTo("01");

        publish(500, 0);
        assertThat(out.readLine()).isEqualTo("done");
        await().atMost(PATIENCE).until(() -> watermark.get() == 499);
        assertThat(sink.held(new WorkerKey(INSTANCE, 0), StorageTier.DEVICE)).hasSize(1_000);
        assertThat(metrics.get("gaps")).isZero();
        assertThat(metrics.sumStartingWith("malformed")).isZero();
        assertThat(listener.snapshot().connected()).isTrue();
    }

    @Test
    void libzmqHeartbeatsAreAnsweredAndTheConnectionStaysUp() throws IOException {
        BufferedReader out = start("PUB", 100); // libzmq drops a peer that does not answer within 300 ms
        int port = Integer.parseInt(out.readLine().trim());
        RecordingSink sink = new RecordingSink(false);
        CountingMetrics metrics = new CountingMetrics();
        SequenceWatermark watermark = listen(port, sink, metrics);
        await().atMost(PATIENCE).until(() -> listener.snapshot().connected());

        publish(60, 25); // 1.5 s: many heartbeat intervals
        assertThat(out.readLine()).isEqualTo("done");
        await().atMost(PATIENCE).until(() -> watermark.get() == 59);
        assertThat(metrics.get("disconnects")).as("no heartbeat timeout").isZero();
        assertThat(metrics.get("gaps")).isZero();
        assertThat(listener.snapshot().connected()).isTrue();
    }

    private BufferedReader start(String kind, int heartbeatMillis) throws IOException {
        Path script = dir.resolve("publisher.py");
        Files.writeString(script, PUBLISHER);
        Path exe = Path.of("/usr/bin/python3");
        assertThat(exe)
                .as("Debian's python3 with python3-zmq and python3-msgpack (bin/run-tests installs them)")
                .isExecutable();
        python = new ProcessBuilder(exe.toString(), script.toString(), kind, Integer.toString(heartbeatMillis))
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        resources.add(python::destroyForcibly);
        return new BufferedReader(new InputStreamReader(python.getInputStream(), StandardCharsets.UTF_8));
    }

    private void publish(int count, int pauseMillis) throws IOException {
        Writer in = new java.io.OutputStreamWriter(python.getOutputStream(), StandardCharsets.UTF_8);
        in.write(count + " " + pauseMillis + "\n");
        in.flush();
    }

    private SequenceWatermark listen(int port, RecordingSink sink, CountingMetrics metrics) {
        SequenceWatermark watermark = new SequenceWatermark();
        listener = resources.listener(
                new ListenerSpec(INSTANCE, 0, "tcp://127.0.0.1:" + port, null), watermark, sink, metrics.options());
        await().atMost(PATIENCE).until(() -> listener.status() == ListenerStatus.ACTIVE);
        return watermark;
    }
}

package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The seq {@code ff x 8} ends a replay answer (vLLM's and SGLang's end marker), also when its payload frame is not
 * empty: no batch has that seq, and taken as one it set the stream's watermark to the value that means unset.
 */
class ReservedSeqReplyTest {

    @Test
    void aReplyWithTheEndMarkersSeqEndsTheAnswerAndIsNotTaken() throws Exception {
        AtomicBoolean stopped = new AtomicBoolean();
        try (ZContext context = new ZContext()) {
            ZMQ.Socket router = context.createSocket(SocketType.ROUTER);
            router.setLinger(0);
            String endpoint = "tcp://127.0.0.1:" + router.bindToRandomPort("tcp://127.0.0.1");
            ReplayClient client = new ReplayClient(
                    ZmqContext.shared(), endpoint, ListenerOptions.defaults().replaySettings(), stopped::get, () -> {});
            RecordingTarget target = new RecordingTarget();
            CompletableFuture<ReplayClient.Outcome> replay = CompletableFuture.supplyAsync(() -> {
                try {
                    return client.replay(5, ReplayClient.EVERYTHING, target);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            try {
                router.setReceiveTimeOut(30_000);
                byte[] identity = router.recv();
                assertThat(identity).as("the replay request came").isNotNull();
                while (router.hasReceiveMore()) {
                    router.recv(); // "", seq 5
                }
                // the answer of an engine that holds nothing from seq 5, its end marker with a payload frame
                reply(router, identity, Frames.seqBytes(Frames.END_SEQ), new byte[] {(byte) 0x90});
                ReplayClient.Outcome outcome = replay.get(30, TimeUnit.SECONDS);
                assertThat(target.taken).as("no batch").isEmpty();
                assertThat(target.lost)
                        .as("nothing from 5 on: no range to report")
                        .isEmpty();
                assertThat(outcome.result()).isEqualTo(IngestMetrics.ReplayResult.OK);
                assertThat(outcome.empty()).isTrue();
            } finally {
                stopped.set(true);
            }
        }
    }

    /** One reply as vLLM >= 0.26 sends it: {@code [identity, "", topic, seq, payload]}. */
    private static void reply(ZMQ.Socket router, byte[] identity, byte[] seq, byte[] payload) {
        router.sendMore(identity);
        router.sendMore(Frames.EMPTY);
        router.sendMore(Frames.EMPTY);
        router.sendMore(seq);
        router.send(payload);
    }
}

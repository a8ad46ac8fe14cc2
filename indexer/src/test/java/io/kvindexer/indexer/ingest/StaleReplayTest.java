package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * An engine whose replay ROUTER answers every request with batches below the one asked for, over and over, gives
 * the replay nothing: only a reply that moves the replay on renews its wait, so it ends as a timeout (the range
 * reported lost) within its deadline instead of running as long as the stale replies come.
 */
class StaleReplayTest {

    private static final Duration TIMEOUT = Duration.ofMillis(500);

    @Test
    void staleRepliesDoNotKeepAReplayAlive() throws Exception {
        AtomicBoolean stopped = new AtomicBoolean();
        try (StaleRouter router = new StaleRouter()) {
            ListenerOptions options = ListenerOptions.defaults().with(o -> o.replayTimeout = TIMEOUT);
            ReplayClient client = new ReplayClient(
                    ZmqContext.shared(), router.endpoint, options.replaySettings(), stopped::get, () -> {});
            RecordingTarget target = new RecordingTarget();
            CompletableFuture<ReplayClient.Outcome> replay = CompletableFuture.supplyAsync(() -> {
                try {
                    return client.replay(100, 110, target);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            try {
                // three silent requests of 0.5 s each, and their handshakes: far less than this
                ReplayClient.Outcome outcome = replay.get(30, TimeUnit.SECONDS);
                assertThat(outcome.result()).isEqualTo(IngestMetrics.ReplayResult.TIMEOUT);
                assertThat(target.taken).isEmpty();
                assertThat(target.lost).singleElement().asString().startsWith("100..110: replay from 100 timed out");
                assertThat(router.staleSent.get())
                        .as("the replay did get stale replies")
                        .isGreaterThan(ReplayClient.SILENT_ATTEMPTS);
            } finally {
                stopped.set(true);
            }
        }
    }

    /** A ROUTER that, once asked, sends each asker a batch below its request every 20 ms, for as long as it runs. */
    private static final class StaleRouter implements AutoCloseable {
        final ZContext context = new ZContext();
        final ZMQ.Socket router = context.createSocket(SocketType.ROUTER);
        final String endpoint;
        final AtomicInteger staleSent = new AtomicInteger();
        final AtomicBoolean closing = new AtomicBoolean();
        final Thread thread;

        StaleRouter() {
            router.setLinger(0);
            router.setReceiveTimeOut(20);
            int port = router.bindToRandomPort("tcp://127.0.0.1");
            endpoint = "tcp://127.0.0.1:" + port;
            thread = Thread.ofPlatform().daemon().start(this::serve);
        }

        private void serve() {
            List<byte[]> askers = new ArrayList<>();
            try {
                while (!closing.get()) {
                    byte[] identity = router.recv();
                    if (identity != null) {
                        while (router.hasReceiveMore()) {
                            router.recv(); // "", the seq asked for
                        }
                        askers.add(identity);
                    }
                    for (byte[] asker : askers) {
                        router.sendMore(asker);
                        router.sendMore(Frames.EMPTY);
                        router.sendMore(Frames.seqBytes(7)); // below every seq asked for
                        router.send(new byte[] {(byte) 0x90});
                        staleSent.incrementAndGet();
                    }
                }
            } catch (RuntimeException e) {
                // the context closed under it
            }
        }

        @Override
        public void close() {
            closing.set(true);
            try {
                thread.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            context.close();
        }
    }
}

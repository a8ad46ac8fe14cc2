package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A replay DEALER whose handshake never completes (a TCP peer that never answers, as a connect that jeromq stalls
 * looks to us) is made again after an eighth of the handshake deadline first, then after twice as long each time, up
 * to the deadline: a stall costs a replay a fraction of the deadline, and slow handshakes are not retried in a loop.
 */
class ReplayHandshakeTest {

    private static final Duration DEADLINE = Duration.ofSeconds(8);

    /**
     * The gaps are timed at the server's accepts, while the client's deadline starts at its own connect event: the
     * two threads wake at slightly different times, so the lower bounds allow this much (a retry at once, the bug
     * they catch, would be 1 s short).
     */
    private static final long SKEW_MILLIS = 100;

    @Test
    void aStalledHandshakeIsRetriedSoonThenLessOften() throws Exception {
        try (SilentServer silent = new SilentServer()) {
            AtomicInteger retries = new AtomicInteger();
            AtomicBoolean stopped = new AtomicBoolean();
            ListenerOptions options = ListenerOptions.defaults().with(o -> {
                o.handshakeTimeout = DEADLINE;
                o.replayTimeout = Duration.ofSeconds(60);
            });
            ReplayClient client = new ReplayClient(
                    ZmqContext.shared(),
                    silent.endpoint(),
                    options.replaySettings(),
                    stopped::get,
                    retries::incrementAndGet);
            RecordingTarget target = new RecordingTarget();
            CompletableFuture<ReplayClient.Outcome> replay = CompletableFuture.supplyAsync(() -> {
                try {
                    return client.replay(0, 10, target);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });

            await().atMost(Duration.ofSeconds(30)).until(() -> retries.get() >= 2);
            // the first connection and the two retries'
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> silent.acceptedAt().size() >= 3);
            List<Long> acceptedAt = silent.acceptedAt();
            long[] gaps = {
                TimeUnit.NANOSECONDS.toMillis(acceptedAt.get(1) - acceptedAt.get(0)),
                TimeUnit.NANOSECONDS.toMillis(acceptedAt.get(2) - acceptedAt.get(1))
            };
            long first = DEADLINE.toMillis() / ReplayClient.FIRST_HANDSHAKE_SHARE;
            assertThat(gaps[0])
                    .as("the first retry: after an eighth of the deadline, well before all of it")
                    .isGreaterThanOrEqualTo(first - SKEW_MILLIS)
                    .isLessThan(DEADLINE.toMillis() / 2);
            assertThat(gaps[1]).as("the second waits twice as long").isGreaterThanOrEqualTo(2 * first - SKEW_MILLIS);

            stopped.set(true);
            assertThat(replay.get(30, TimeUnit.SECONDS)).as("stopped").isNull();
            assertThat(target.taken).as("no engine answered").isEmpty();
        }
    }
}

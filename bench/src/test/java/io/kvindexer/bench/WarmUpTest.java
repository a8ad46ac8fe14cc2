package io.kvindexer.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The warm-up's bounds: the runs asked for always, more only while the compilers are busy, never past the maximum. */
class WarmUpTest {

    @Test
    void noWarmUpAskedMeansNoRunEvenWhileTheCompilersAreBusy() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        assertThat(WarmUp.run(0, 8, runs::incrementAndGet)).isZero();
        assertThat(runs.get()).isZero();
    }

    @Test
    void theMinimumRunsAlwaysAndTheMaximumBoundsTheRest() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        assertThat(WarmUp.run(2, 2, runs::incrementAndGet)).isEqualTo(2);
        assertThat(runs.get()).isEqualTo(2);

        runs.set(0);
        assertThat(WarmUp.run(3, 1, runs::incrementAndGet))
                .as("a maximum below the minimum: the minimum still runs, nothing more")
                .isEqualTo(3);
        assertThat(runs.get()).isEqualTo(3);

        runs.set(0);
        // a round with a hot loop the compilers may still be compiling: whatever they do, the count is the runs made
        // and stays within the bounds
        int done = WarmUp.run(1, 3, () -> {
            runs.incrementAndGet();
            long sink = 0;
            for (int i = 0; i < 200_000; i++) {
                sink += Long.rotateLeft(sink ^ i, i & 63);
            }
            if (sink == 42) {
                throw new AssertionError("unreachable");
            }
        });
        assertThat(done).isBetween(1, 3).isEqualTo(runs.get());
    }
}

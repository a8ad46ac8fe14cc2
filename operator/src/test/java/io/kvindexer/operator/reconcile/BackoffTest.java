package io.kvindexer.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackoffTest {

    private final Backoff backoff = new Backoff(Duration.ofMillis(500), Duration.ofSeconds(3));

    @Test
    void doublesPerFailureUpToTheCapPerKey() {
        assertThat(backoff.next("a")).isEqualTo(Duration.ofMillis(500));
        assertThat(backoff.next("a")).isEqualTo(Duration.ofSeconds(1));
        assertThat(backoff.next("b")).isEqualTo(Duration.ofMillis(500));
        assertThat(backoff.next("a")).isEqualTo(Duration.ofSeconds(2));
        assertThat(backoff.next("a")).isEqualTo(Duration.ofSeconds(3));
        assertThat(backoff.next("a")).isEqualTo(Duration.ofSeconds(3));
    }

    @Test
    void afterASuccessTheFailuresAreForgotten() {
        Duration resync = Duration.ofSeconds(30);
        assertThat(backoff.after("a", true, resync)).isEqualTo(Duration.ofMillis(500));
        assertThat(backoff.after("a", true, resync)).isEqualTo(Duration.ofSeconds(1));
        assertThat(backoff.after("a", false, resync)).isEqualTo(resync);
        assertThat(backoff.after("a", true, resync)).isEqualTo(Duration.ofMillis(500));
    }
}

package io.kvindexer.operator.indexer;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class PeerPlanTest {
    @Test
    void addsMissingAndRemovesStalePeers() {
        PeerPlan plan = PeerPlan.of(List.of("http://a", "http://b"), List.of("http://b", "http://gone"));
        assertThat(plan.toRegister()).containsExactly("http://a");
        assertThat(plan.toDeregister()).containsExactly("http://gone");
        assertThat(PeerPlan.of(List.of("x"), List.of("x")).isEmpty()).isTrue();
    }
}

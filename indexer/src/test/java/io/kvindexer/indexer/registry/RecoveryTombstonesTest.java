package io.kvindexer.indexer.registry;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** What an {@code /unregister} taken during recovery removes of what recovery brings, form by form. */
class RecoveryTombstonesTest {

    @Test
    void aRankWithoutATenantCoversThatRankUnderAnyTenantOfTheModel() {
        RecoveryTombstones t = new RecoveryTombstones();
        t.add(1, "m", null, 1);
        assertThat(t.covers(1, "m", "a", 1)).isTrue();
        assertThat(t.covers(1, "m", "b", 1)).isTrue();
        assertThat(t.covers(1, "m", "a", 0)).as("another rank stays").isFalse();
        assertThat(t.covers(1, "x", "a", 1)).as("another model").isFalse();
        assertThat(t.covers(2, "m", "a", 1)).as("another instance").isFalse();
    }

    @Test
    void theOtherFormsCoverWhatTheyName() {
        RecoveryTombstones whole = new RecoveryTombstones();
        whole.add(1, "m", null, null);
        assertThat(whole.covers(1, "m", "a", 0)).isTrue();
        assertThat(whole.covers(1, "m", "b", 7)).isTrue();

        RecoveryTombstones underTenant = new RecoveryTombstones();
        underTenant.add(1, "m", "a", null);
        assertThat(underTenant.covers(1, "m", "a", 3)).isTrue();
        assertThat(underTenant.covers(1, "m", "b", 3)).isFalse();

        RecoveryTombstones oneRank = new RecoveryTombstones();
        oneRank.add(1, "m", "a", 2);
        assertThat(oneRank.covers(1, "m", "a", 2)).isTrue();
        assertThat(oneRank.covers(1, "m", "a", 0)).isFalse();
        assertThat(oneRank.covers(1, "m", "b", 2)).isFalse();
    }
}

package io.kvindexer.indexer.recovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.dump.SavedRegistration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Where each recovered watermark came from: a snapshot combined with a blank peer's registrations keeps its own
 * ranks marked as the snapshot's (as old as the replica's downtime) and the peer's as current; a peer's dump passes
 * on the ranks its writer marked as a snapshot's (version 6).
 */
class RecoveredSourcesTest {

    private static SavedRegistration rank(long instance, long watermark) {
        return new SavedRegistration(instance, 0, "tcp://127.0.0.1:5557", null, null, "m", "default", 4, watermark);
    }

    @Test
    void aBlankPeersRegistrationsAddedToASnapshotAreNotTheSnapshots() {
        Recovered snapshot = new Recovered("snapshot-3.kvix", 1, List.of(rank(1, 7)), () -> {}).fromSnapshot(List.of());
        Recovered blankPeer = new Recovered("http://peer", 0, List.of(rank(1, 9), rank(2, 4)), () -> {}).asBlank();

        Recovered both = snapshot.with(blankPeer);

        assertThat(both.registrations())
                .extracting(SavedRegistration::instanceId, SavedRegistration::watermark)
                .containsExactly(tuple(1L, 7L), tuple(2L, 4L));
        assertThat(both.fromSnapshot()).containsExactly(new WorkerKey(1, 0));
        assertThat(blankPeer.fromSnapshot()).isEmpty();
    }

    @Test
    void aPeersDumpKeepsTheRanksItMarkedAsASnapshotsAndNoOthers() {
        SavedRegistration marked =
                new SavedRegistration(3, 1, "tcp://127.0.0.1:5557", null, null, "m", "default", 4, 5, null, true);

        Recovered peer = new Recovered("http://peer", 1, List.of(rank(1, 9), marked), () -> {});

        assertThat(peer.fromSnapshot()).containsExactly(new WorkerKey(3, 1));
        assertThat(peer.asBlank().fromSnapshot()).containsExactly(new WorkerKey(3, 1));
    }
}

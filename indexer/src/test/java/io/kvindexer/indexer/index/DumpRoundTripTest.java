package io.kvindexer.indexer.index;

import static io.kvindexer.indexer.common.StorageTier.DEVICE;
import static io.kvindexer.indexer.common.StorageTier.DISK;
import static io.kvindexer.indexer.common.StorageTier.EXTERNAL;
import static io.kvindexer.indexer.common.StorageTier.HOST_PINNED;
import static io.kvindexer.indexer.index.IndexFixture.w;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.dump.RouterEvent;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@code /dump} shape and recovery (compatibility.md, Index semantics; backend.rs dump_events_round_trips_through_apply_event_routed). */
class DumpRoundTripTest {

    /** One dumped membership with the event id left out (ids are per dump). */
    record Entry(long worker, int rank, StorageTier tier, boolean hasParent, long parent, long block, long local) {
        static Entry of(RouterEvent e) {
            RouterEvent.Stored s = (RouterEvent.Stored) e.data();
            assertThat(s.blockHashes()).hasSize(1);
            assertThat(s.localHashes()).hasSize(1);
            return new Entry(
                    e.instanceId(),
                    e.dpRank(),
                    e.tier(),
                    s.hasParent(),
                    s.parentBlockHash(),
                    s.blockHashes()[0],
                    s.localHashes()[0]);
        }
    }

    private final IndexFixture f = new IndexFixture(4);

    @AfterEach
    void close() {
        f.close();
    }

    private void populate() {
        f.store(w(1, 0), null, new long[] {101, 102, 103}, 1, 2, 3);
        f.store(w(2, 1), null, new long[] {101, 102}, 1, 2);
        f.store(w(2, 1), 102L, new long[] {204}, 4);
        f.store(w(1, 0), HOST_PINNED, 103L, new long[] {104}, 4);
        f.store(w(1, 0), DISK, 104L, new long[] {105}, 5);
        f.store(w(3, 0), EXTERNAL, 777L, new long[] {301}, 9); // unknown parent on a lower tier
        f.store(w(1, 0), HOST_PINNED, null, new long[] {101}, 1); // same block on two tiers
        // an evicted-parent child: 102 removed from worker 1, its child 103 stays
        f.remove(w(1, 0), 102);
    }

    private static Set<Entry> entries(List<RouterEvent> dump) {
        return dump.stream().map(Entry::of).collect(Collectors.toSet());
    }

    @Test
    void dumpHoldsEveryMembershipDeviceFirstParentsBeforeChildren() {
        populate();
        List<RouterEvent> dump = io.kvindexer.indexer.http.DumpEvents.of(f.index);

        assertThat(dump).hasSize((int) f.index.stats().memberships()).hasSize(9);
        assertThat(dump)
                .extracting(RouterEvent::eventId)
                .containsExactlyElementsOf(java.util.stream.LongStream.range(0, dump.size())
                        .boxed()
                        .toList());
        List<StorageTier> tiers = dump.stream().map(RouterEvent::tier).toList();
        assertThat(tiers).isSortedAccordingTo(java.util.Comparator.comparingInt(StorageTier::ordinal));
        // within the device tier, a block never appears before a block of its parent
        Set<Long> seen = new HashSet<>();
        Set<Long> dumpedDeviceBlocks = dump.stream()
                .filter(e -> e.tier() == DEVICE)
                .map(Entry::of)
                .map(Entry::block)
                .collect(Collectors.toSet());
        for (RouterEvent e : dump) {
            Entry entry = Entry.of(e);
            if (e.tier() != DEVICE) {
                continue;
            }
            if (entry.hasParent() && dumpedDeviceBlocks.contains(entry.parent())) {
                assertThat(seen)
                        .as("parent of %d dumped before it", entry.block())
                        .contains(entry.parent());
            }
            seen.add(entry.block());
        }
        assertThat(entries(dump))
                .contains(
                        new Entry(1, 0, DEVICE, true, 102, 103, f.local(3)[0]),
                        new Entry(2, 1, DEVICE, false, 0, 101, f.local(1)[0]),
                        new Entry(3, 0, EXTERNAL, true, 777, 301, f.local(9)[0]),
                        new Entry(1, 0, HOST_PINNED, false, 0, 101, f.local(1)[0]));
    }

    @Test
    void dumpAppliedToAnEmptyIndexDumpsTheSameAndMatchesTheSame() {
        populate();
        List<RouterEvent> dump = io.kvindexer.indexer.http.DumpEvents.of(f.index);
        long[] query = f.local(1, 2, 3, 4, 5);
        long[] other = f.local(1, 2, 4);
        MatchResult before = f.index.findMatches(query);

        try (IndexFixture g = new IndexFixture(4, 3)) {
            g.recovered(dump.toArray(RouterEvent[]::new));
            assertThat(entries(io.kvindexer.indexer.http.DumpEvents.of(g.index)))
                    .isEqualTo(entries(dump));
            assertThat(g.index.findMatches(query)).isEqualTo(before);
            assertThat(g.index.findMatches(other)).isEqualTo(f.index.findMatches(other));
            assertThat(g.index.stats().memberships()).isEqualTo(f.index.stats().memberships());
            assertThat(g.index.stats().blocks()).isEqualTo(f.index.stats().blocks());
            assertThat(g.applied("stored", ApplyStatus.PARENT_BLOCK_NOT_FOUND))
                    .as("the child of an evicted parent survives recovery")
                    .isZero();
            // and the recovered worker can go on chaining off recovered blocks
            g.store(w(1, 0), 103L, new long[] {106}, 6);
            assertThat(g.applied("stored", ApplyStatus.OK)).isEqualTo(dump.size() + 1);
        }
    }

    @Test
    void dumpInReverseOrderRecoversTheSameState() {
        populate();
        List<RouterEvent> dump = new java.util.ArrayList<>(io.kvindexer.indexer.http.DumpEvents.of(f.index));
        java.util.Collections.reverse(dump);
        try (IndexFixture g = new IndexFixture(4)) {
            g.recovered(dump.toArray(RouterEvent[]::new));
            assertThat(entries(io.kvindexer.indexer.http.DumpEvents.of(g.index)))
                    .isEqualTo(entries(dump));
        }
    }

    @Test
    void recoveredRemovedAndClearedAreApplied() {
        f.recovered(
                IndexFixture.routerStored(1, 0, DEVICE, null, new long[] {11, 12, 13}, new long[] {1, 2, 3}),
                IndexFixture.routerStored(2, 0, DEVICE, null, new long[] {11}, new long[] {1}),
                new RouterEvent(1, 0, DEVICE, 1, new RouterEvent.Removed(new long[] {13})),
                new RouterEvent(2, 0, DEVICE, 2, new RouterEvent.Cleared()));

        assertThat(f.matchHashes(1, 2, 3)).containsOnlyKeys(w(1, 0));
        assertThat(f.matchHashes(1, 2, 3).get(w(1, 0)).deviceBlocks()).isEqualTo(2);
        assertThat(f.applied("removed", ApplyStatus.OK)).isEqualTo(1);
        assertThat(f.applied("cleared", ApplyStatus.OK)).isEqualTo(1);
    }

    @Test
    void recoveredStoredWithMismatchedHashListsIsCountedInvalid() {
        f.recovered(
                IndexFixture.routerStored(1, 0, DEVICE, null, new long[] {11, 12}, new long[] {1}),
                IndexFixture.routerStored(1, 0, DEVICE, 11L, new long[] {11}, new long[] {5}));
        assertThat(f.applied("stored", ApplyStatus.INVALID_BLOCK)).isEqualTo(2);
        assertThat(f.matchHashes(1, 2).get(w(1, 0)).deviceBlocks())
                .as("the paired prefix is kept")
                .isEqualTo(1);
    }

    @Test
    void emptyIndexDumpsNothing() {
        assertThat(io.kvindexer.indexer.http.DumpEvents.of(f.index)).isEmpty();
    }
}

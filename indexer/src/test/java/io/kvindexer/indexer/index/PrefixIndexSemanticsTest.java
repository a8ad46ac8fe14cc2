package io.kvindexer.indexer.index;

import static io.kvindexer.indexer.common.StorageTier.DEVICE;
import static io.kvindexer.indexer.common.StorageTier.DISK;
import static io.kvindexer.indexer.common.StorageTier.EXTERNAL;
import static io.kvindexer.indexer.common.StorageTier.HOST_PINNED;
import static io.kvindexer.indexer.index.IndexFixture.w;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.BlockStored;
import io.kvindexer.indexer.hash.BlockHasher;
import io.kvindexer.indexer.http.OverlapScores;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Store / remove / clear / match semantics of one index (compatibility.md, Engine event streams and Index semantics; compatibility.md, Where we differ on purpose where it differs). */
class PrefixIndexSemanticsTest {

    private final IndexFixture f = new IndexFixture(4);

    @AfterEach
    void close() {
        f.close();
    }

    // ---- stores and device matches (ported from radix_tree.rs test_radix_tree) -------------------------------

    @Test
    void chainWithoutParentMatchesItsPrefixes() {
        f.store(w(1, 0), null, new long[] {101, 102, 103}, 1, 2, 3);

        assertThat(f.deviceScores(1, 2, 3)).containsExactly(entry(w(1, 0), 3));
        assertThat(f.deviceScores(1, 2, 3, 4, 5)).containsExactly(entry(w(1, 0), 3));
        assertThat(f.deviceScores(1, 2)).containsExactly(entry(w(1, 0), 2));
        assertThat(f.deviceScores(2, 3)).as("a match must start at the root").isEmpty();
        assertThat(f.deviceScores(1, 4, 5)).containsExactly(entry(w(1, 0), 1));
        assertThat(f.index.stats().blocks()).isEqualTo(3);
        assertThat(f.index.stats().memberships()).isEqualTo(3);
    }

    @Test
    void chainExtendedUnderAHeldParent() {
        f.store(w(1, 0), null, new long[] {101}, 1);
        f.store(w(1, 0), 101L, new long[] {102, 103}, 2, 3);

        assertThat(f.deviceScores(1, 2, 3)).containsExactly(entry(w(1, 0), 3));
        assertThat(f.applied("stored", ApplyStatus.OK)).isEqualTo(2);
    }

    @Test
    void twoWorkersWithDivergingSequences() {
        // Dynamo: worker 1 holds [1,2,3], worker 2 holds [1,4,5]; query [1,2,3] => 3 and 1
        f.store(w(1, 0), null, new long[] {101, 102, 103}, 1, 2, 3);
        f.store(w(2, 0), null, new long[] {101, 204, 205}, 1, 4, 5);

        assertThat(f.deviceScores(1, 2, 3)).containsOnly(entry(w(1, 0), 3), entry(w(2, 0), 1));
        assertThat(f.deviceScores(1, 4, 5)).containsOnly(entry(w(1, 0), 1), entry(w(2, 0), 3));
        assertThat(f.index.stats().blocks()).as("block 101 is shared").isEqualTo(5);
        assertThat(f.index.stats().memberships()).isEqualTo(6);
    }

    @Test
    void sameBlocksOnSeveralWorkersAndDpRanks() {
        for (WorkerKey w : List.of(w(1, 0), w(1, 1), w(2, 0), w(-1L, 3))) {
            f.store(w, null, new long[] {101, 102}, 1, 2);
        }
        f.store(w(1, 1), 102L, new long[] {103}, 3);

        Map<WorkerKey, Integer> scores = f.deviceScores(1, 2, 3);
        assertThat(scores).containsOnly(entry(w(1, 0), 2), entry(w(1, 1), 3), entry(w(2, 0), 2), entry(w(-1L, 3), 2));
        assertThat(f.index.stats().blocks()).isEqualTo(3);
        assertThat(f.index.stats().memberships()).isEqualTo(9);
    }

    @Test
    void sameContentUnderDifferentParentsIsNotConfused() {
        // block content 7 appears at depth 1 under two different roots (ported:
        // branch_matching_is_exact_by_parent_hash)
        f.store(w(1, 0), null, new long[] {101, 102}, 1, 7);
        f.store(w(2, 0), null, new long[] {201, 202}, 2, 7);

        assertThat(f.deviceScores(1, 7)).containsExactly(entry(w(1, 0), 2));
        assertThat(f.deviceScores(2, 7)).containsExactly(entry(w(2, 0), 2));
        assertThat(f.deviceScores(3, 7)).isEmpty();
    }

    @Test
    void aWorkerMustHoldEveryBlockOfThePrefix() {
        // worker 2 holds only the child of a block held by worker 1: it must not match through worker 1's block
        f.store(w(1, 0), null, new long[] {101}, 1);
        f.recovered(IndexFixture.routerStored(2, 0, DEVICE, 101L, new long[] {102}, f.local(2)));

        assertThat(f.deviceScores(1, 2)).containsExactly(entry(w(1, 0), 1));
    }

    @Test
    void sameContentWithDifferentSequenceHashesUnderOneKey() {
        // engines with different hash seeds: two nodes under one (parent = root, local) key
        f.store(w(1, 0), null, new long[] {101, 102}, 1, 2);
        f.store(w(2, 0), null, new long[] {901, 902}, 1, 2);
        f.store(w(2, 0), 902L, new long[] {903}, 3);

        assertThat(f.deviceScores(1, 2, 3)).containsOnly(entry(w(1, 0), 2), entry(w(2, 0), 3));
        assertThat(f.index.stats().blocks()).isEqualTo(5);
        f.remove(w(1, 0), 101);
        assertThat(f.deviceScores(1, 2, 3))
                .as("102 of worker 1 lost its parent")
                .containsOnly(entry(w(2, 0), 3));
    }

    @Test
    void aLongPromptHeldUnderSeveralHashSeedsIsMatchedByAll() {
        // three engines whose hash seeds differ store the same 40 blocks under their own block hashes, one block at a
        // time and in turn, so no block's parent is the node before it: the walk probes every position and finds
        // three candidates at each, one per engine (PrefixProbeTest has the probe's side of it)
        int length = 40;
        int[] contents = new int[length];
        for (int i = 0; i < length; i++) {
            contents[i] = 1 + i % 5;
        }
        for (int i = 0; i < length; i++) {
            for (int engine = 1; engine <= 3; engine++) {
                long block = engine * 1_000_000L + i;
                f.store(w(engine, 0), i == 0 ? null : block - 1, new long[] {block}, contents[i]);
            }
        }
        assertThat(f.deviceScores(contents))
                .containsOnly(entry(w(1, 0), length), entry(w(2, 0), length), entry(w(3, 0), length));
    }

    // ---- parent rules (radix_tree.rs test_radix_tree_apply_event_errors, compatibility.md, Engine event streams)
    // ---------------------------

    @Test
    void deviceStoreWithUnknownParentIsDroppedAndCounted() {
        f.store(w(1, 0), 999L, new long[] {101, 102}, 1, 2);

        assertThat(f.applied("stored", ApplyStatus.PARENT_BLOCK_NOT_FOUND)).isEqualTo(1);
        assertThat(f.index.stats().blocks()).isZero();
        assertThat(f.match(1, 2)).isEmpty();
    }

    @Test
    void deviceParentMustBeHeldByTheSameWorkerOnTheDeviceTier() {
        f.store(w(1, 0), null, new long[] {101}, 1);
        f.store(w(2, 0), HOST_PINNED, null, new long[] {101}, 1);

        f.store(w(2, 0), 101L, new long[] {102}, 2); // parent held by another worker only
        f.store(w(1, 1), 101L, new long[] {102}, 2); // another dp rank of the owner
        assertThat(f.applied("stored", ApplyStatus.PARENT_BLOCK_NOT_FOUND)).isEqualTo(2);

        f.store(w(1, 0), 101L, new long[] {102}, 2);
        assertThat(f.applied("stored", ApplyStatus.OK)).isEqualTo(3);
        assertThat(f.deviceScores(1, 2)).containsExactly(entry(w(1, 0), 2));
    }

    /**
     * One block hash given other content by another engine's device store (counter hashes, hashes not chained, a
     * collision): that store stops there, counted invalid, instead of joining the node and crediting its worker with
     * tokens it never stored. Lower tiers are not checked (an offloaded block may come without its parent). One
     * shard: workers in different shards do not share nodes.
     */
    @Test
    void aBlockHashGivenOtherContentOnTheDeviceTierIsInvalidAndJoinsNothing() {
        IndexFixture g = new IndexFixture(4, 1);
        try {
            g.store(w(1, 0), null, new long[] {7, 8}, 1, 2);
            g.store(w(2, 0), null, new long[] {7, 9}, 3, 4); // other tokens under hash 7
            g.store(w(3, 0), null, new long[] {5, 7}, 1, 1); // hash 7 under another parent, same tokens
            g.store(w(4, 0), null, new long[] {7}, 1); // the same content: joins

            assertThat(g.applied("stored", ApplyStatus.INVALID_BLOCK)).isEqualTo(2);
            assertThat(g.deviceScores(1, 2)) // worker 3 by its block 5, whose content is 1 too
                    .containsOnly(entry(w(1, 0), 2), entry(w(3, 0), 1), entry(w(4, 0), 1));
            assertThat(g.deviceScores(3, 4)).isEmpty();
            assertThat(g.deviceScores(1, 1))
                    .as("block 5, stored before the conflict")
                    .containsOnly(entry(w(1, 0), 1), entry(w(3, 0), 1), entry(w(4, 0), 1));

            g.store(w(2, 0), HOST_PINNED, null, new long[] {8}, 9); // a lower tier keeps the node's content
            assertThat(g.applied("stored", ApplyStatus.INVALID_BLOCK)).isEqualTo(2);
        } finally {
            g.close();
        }
    }

    @Test
    void childrenOfADroppedStoreAreDroppedToo() {
        f.store(w(1, 0), 999L, new long[] {101}, 1);
        f.store(w(1, 0), 101L, new long[] {102}, 2);
        assertThat(f.applied("stored", ApplyStatus.PARENT_BLOCK_NOT_FOUND)).isEqualTo(2);
        assertThat(f.index.stats().memberships()).isZero();
    }

    @Test
    void repeatedHashOrSelfParentIsInvalidAndStoresNothing() {
        f.store(w(1, 0), null, new long[] {101}, 1);
        f.store(w(1, 0), 101L, new long[] {102, 101}, 2, 3); // parent inside blocks
        f.store(w(1, 0), 101L, new long[] {102, 103, 102}, 2, 3, 4); // repeat inside blocks
        long[] many = new long[12];
        for (int i = 0; i < many.length; i++) {
            many[i] = 500 + i;
        }
        many[11] = 500; // repeat in a long chain
        f.store(w(1, 0), 101L, many, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1);

        assertThat(f.applied("stored", ApplyStatus.INVALID_BLOCK)).isEqualTo(3);
        assertThat(f.index.stats().memberships()).isEqualTo(1);
    }

    @Test
    void theRepeatCheckForgetsTheChainBeforeAndCatchesRepeatsInLongChains() {
        f.store(w(1, 0), null, new long[] {101}, 1);
        long[] twelve = new long[12];
        for (int i = 0; i < twelve.length; i++) {
            twelve[i] = 500 + i;
        }
        long[] withParent = twelve.clone();
        withParent[11] = 101; // the parent again, deep in a chain checked with a set
        f.store(w(1, 0), 101L, withParent, new int[12]);
        // the same hashes again, now valid: the check must not remember the invalid chain's blocks
        f.store(w(1, 0), 101L, twelve, new int[12]);
        long[] long600 = new long[600];
        for (int i = 0; i < long600.length; i++) {
            long600[i] = 10_000 + i;
        }
        long600[599] = 10_000; // a repeat in a chain longer than the reused set takes
        f.store(w(1, 0), 511L, long600, new int[600]);

        assertThat(f.applied("stored", ApplyStatus.INVALID_BLOCK)).isEqualTo(2);
        assertThat(f.index.stats().memberships()).isEqualTo(13);
    }

    @Test
    void duplicateStoreIsIdempotentAndCounted() {
        f.store(w(1, 0), null, new long[] {101, 102}, 1, 2);
        f.store(w(1, 0), null, new long[] {101, 102}, 1, 2);
        f.store(w(1, 0), null, new long[] {101, 102, 103}, 1, 2, 3); // partly new: OK

        assertThat(f.applied("stored", ApplyStatus.DUPLICATE_STORE)).isEqualTo(1);
        assertThat(f.applied("stored", ApplyStatus.OK)).isEqualTo(2);
        assertThat(f.index.stats().memberships()).isEqualTo(3);
        // ported duplicate_store_is_idempotent_for_remove: one remove undoes it
        f.remove(w(1, 0), 103, 102, 101);
        assertThat(f.index.stats().memberships()).isZero();
        assertThat(f.index.stats().blocks()).isZero();
        assertThat(f.match(1)).isEmpty();
    }

    // ---- removal ---------------------------------------------------------------------------------------------

    @Test
    void removeOfUnknownBlockIsCountedAndTheRestStillRemoved() {
        f.store(w(1, 0), null, new long[] {101, 102, 103}, 1, 2, 3);
        f.remove(w(1, 0), 555, 103);
        f.remove(w(9, 0), 101); // a worker that holds nothing

        assertThat(f.applied("removed", ApplyStatus.BLOCK_NOT_FOUND)).isEqualTo(2);
        assertThat(f.deviceScores(1, 2, 3)).containsExactly(entry(w(1, 0), 2));
    }

    @Test
    void removeOnOneTierKeepsTheOtherTier() {
        f.store(w(1, 0), null, new long[] {101}, 1);
        f.store(w(1, 0), HOST_PINNED, null, new long[] {101}, 1);
        f.remove(w(1, 0), HOST_PINNED, 101);

        assertThat(f.match(1).get(w(1, 0))).isEqualTo(new MatchResult.WorkerMatch(w(1, 0), 1, 1, 1));
        f.remove(w(1, 0), HOST_PINNED, 101);
        assertThat(f.applied("removed", ApplyStatus.BLOCK_NOT_FOUND)).isEqualTo(1);
    }

    @Test
    void removingTheMiddleBlockStopsTheMatchThereWithoutCascading() {
        f.store(w(1, 0), null, new long[] {101, 102, 103, 104}, 1, 2, 3, 4);
        f.remove(w(1, 0), 102);

        assertThat(f.deviceScores(1, 2, 3, 4)).containsExactly(entry(w(1, 0), 1));
        assertThat(f.index.stats().memberships())
                .as("descendants keep their membership")
                .isEqualTo(3);
    }

    @Test
    void reStoringAnEvictedMiddleBlockRestoresTheWholeChain() {
        // compatibility.md, Where we differ on purpose: vLLM frees a shared prefix block before its children; Dynamo's
        // tree under-reports here
        f.store(w(1, 0), null, new long[] {101, 102, 103, 104}, 1, 2, 3, 4);
        f.store(w(2, 0), null, new long[] {101}, 1);
        f.remove(w(1, 0), 102);
        f.remove(w(1, 0), 101);
        assertThat(f.index.stats().blocks())
                .as("102 is gone, its children stay")
                .isEqualTo(3);

        f.store(w(1, 0), null, new long[] {101, 102}, 1, 2);
        assertThat(f.deviceScores(1, 2, 3, 4)).containsOnly(entry(w(1, 0), 4), entry(w(2, 0), 1));
        assertThat(f.applied("stored", ApplyStatus.OK)).isEqualTo(3);
    }

    @Test
    void removingOneOwnerKeepsTheSharedBlockForOthers() {
        f.store(w(1, 0), null, new long[] {101, 102}, 1, 2);
        f.store(w(2, 0), null, new long[] {101, 102}, 1, 2);
        f.remove(w(1, 0), 101, 102);

        assertThat(f.deviceScores(1, 2)).containsExactly(entry(w(2, 0), 2));
        assertThat(f.index.stats().blocks()).isEqualTo(2);
    }

    // ---- clear and worker removal (radix_tree.rs test_clear_all_blocks, test_remove_worker_*) ------------------

    @Test
    void clearOfOneRankKeepsOtherRanksAndWorkers() {
        for (WorkerKey w : List.of(w(1, 0), w(1, 1), w(2, 0))) {
            f.store(w, null, new long[] {101, 102}, 1, 2);
            f.store(w, DISK, 102L, new long[] {103}, 3);
        }
        f.clear(w(1, 0));

        assertThat(f.match(1, 2, 3)).containsOnlyKeys(w(1, 1), w(2, 0));
        assertThat(f.index.stats().memberships()).isEqualTo(6);
        assertThat(f.applied("cleared", ApplyStatus.OK)).isEqualTo(1);
        // the cleared worker can start again from the root
        f.store(w(1, 0), null, new long[] {101}, 1);
        assertThat(f.deviceScores(1, 2)).containsOnly(entry(w(1, 0), 1), entry(w(1, 1), 2), entry(w(2, 0), 2));
    }

    @Test
    void clearOfAWorkerWithNothingIsHarmless() {
        f.store(w(1, 0), null, new long[] {101}, 1);
        f.clear(w(7, 0));
        assertThat(f.deviceScores(1)).containsExactly(entry(w(1, 0), 1));
    }

    @Test
    void removeInstanceDropsEveryRankOnEveryTier() {
        f.store(w(1, 0), null, new long[] {101}, 1);
        f.store(w(1, 1), null, new long[] {101}, 1);
        f.store(w(1, 2), EXTERNAL, null, new long[] {101}, 1);
        f.store(w(2, 0), null, new long[] {101}, 1);
        f.index.removeInstance(1).join();

        assertThat(f.match(1)).containsOnlyKeys(w(2, 0));
        assertThat(f.index.stats().memberships()).isEqualTo(1);
    }

    @Test
    void removeWorkerDropsOneRankOnEveryTier() {
        // ported thread_pool_backend_remove_worker_dp_rank_keeps_other_rank
        f.store(w(1, 0), null, new long[] {101}, 1);
        f.store(w(1, 0), HOST_PINNED, 101L, new long[] {102}, 2);
        f.store(w(1, 1), HOST_PINNED, 101L, new long[] {102}, 2);
        f.store(w(1, 1), null, new long[] {101}, 1);
        f.index.removeWorker(w(1, 0)).join();

        assertThat(f.match(1, 2)).containsOnlyKeys(w(1, 1));
        assertThat(f.match(1, 2).get(w(1, 1))).isEqualTo(new MatchResult.WorkerMatch(w(1, 1), 1, 2, 2));
        assertThat(f.index.stats().memberships()).isEqualTo(2);
    }

    @Test
    void removingAWorkerOfALargeIndexScansEveryChunk() {
        // more nodes than one scan chunk: the removal must reach nodes in every chunk and free the worker's slot
        int chains = 50;
        int length = 1_000;
        for (int c = 0; c < chains; c++) {
            long[] seq = new long[length];
            long[] local = new long[length];
            for (int i = 0; i < length; i++) {
                seq[i] = 1_000_000L * (c + 1) + i;
                local[i] = i;
            }
            io.kvindexer.indexer.recovery.RouterEventOps.submit(
                    f.index, List.of(IndexFixture.routerStored(1, 0, DEVICE, null, seq, local)));
            if (c % 2 == 0) {
                io.kvindexer.indexer.recovery.RouterEventOps.submit(
                        f.index, List.of(IndexFixture.routerStored(2, 0, DISK, null, seq, local)));
            }
        }
        f.flush();
        assertThat(f.index.stats().blocks()).isEqualTo(50_000);
        f.index.removeWorker(w(1, 0)).join();

        assertThat(f.index.stats().memberships()).isEqualTo(25_000);
        assertThat(f.index.stats().blocks()).isEqualTo(25_000);
        assertThat(f.matchHashes(0, 1, 2)).containsOnlyKeys(w(2, 0));
        assertThat(io.kvindexer.indexer.http.DumpEvents.of(f.index)).allMatch(e -> e.instanceId() == 2);
    }

    // ---- tiers (compatibility.md, Index semantics, lower_tier.rs)
    // --------------------------------------------------------------------

    @Test
    void workedExampleOfSpecFiveSix() {
        try (IndexFixture g = new IndexFixture(16)) {
            int[] tokens = new int[48];
            for (int i = 0; i < tokens.length; i++) {
                tokens[i] = i + 1;
            }
            long[] hashes = g.index.localHashes(tokens, null, null);
            g.submit(
                    w(1, 0),
                    new BlockStored(
                            new long[] {5001, 5002},
                            false,
                            0,
                            java.util.Arrays.copyOf(tokens, 32),
                            16,
                            null,
                            DEVICE,
                            null,
                            false));
            OverlapScores first = OverlapScores.of(
                    g.index.findMatches(g.index.localHashes(java.util.Arrays.copyOf(tokens, 40), null, null)), 16);
            assertThat(first.scores()).isEqualTo(Map.of(1L, Map.of(0, 32L)));
            assertThat(first.instances())
                    .isEqualTo(Map.of(1L, new OverlapScores.InstanceTiers(32, 32, Map.of(0, 32L), 32, 32)));

            g.submit(
                    w(1, 0),
                    new BlockStored(
                            new long[] {5003},
                            true,
                            5002,
                            java.util.Arrays.copyOfRange(tokens, 32, 48),
                            16,
                            null,
                            StorageTier.fromMedium("CPU_PINNED"),
                            null,
                            false));
            OverlapScores second = OverlapScores.of(g.index.findMatches(hashes), 16);
            assertThat(second.scores()).isEqualTo(Map.of(1L, Map.of(0, 32L)));
            assertThat(second.instances())
                    .isEqualTo(Map.of(1L, new OverlapScores.InstanceTiers(48, 32, Map.of(0, 32L), 48, 48)));
        }
    }

    @Test
    void buildScoreResponseContainsPerInstanceTierBreakdown() {
        // Dynamo server.rs build_score_response_contains_per_instance_tier_breakdown, block size 4
        f.recovered(
                IndexFixture.routerStored(7, 0, DEVICE, null, new long[] {1011, 1012}, new long[] {11, 12}),
                IndexFixture.routerStored(8, 0, DEVICE, null, new long[] {1011, 1012}, new long[] {11, 12}),
                IndexFixture.routerStored(7, 0, HOST_PINNED, 1012L, new long[] {1013}, new long[] {13}));

        OverlapScores scores = OverlapScores.of(f.index.findMatches(new long[] {11, 12, 13}), 4);
        assertThat(scores.scores()).isEqualTo(Map.of(7L, Map.of(0, 8L), 8L, Map.of(0, 8L)));
        assertThat(scores.instances().get(7L)).isEqualTo(new OverlapScores.InstanceTiers(12, 8, Map.of(0, 8L), 12, 12));
        assertThat(scores.instances().get(8L)).isEqualTo(new OverlapScores.InstanceTiers(8, 8, Map.of(0, 8L), 8, 8));
    }

    @Test
    void applyEventRoutedDispatchesByTier() {
        // Dynamo backend.rs apply_event_routed_dispatches_by_tier: device store counted on device (2),
        // host store reported as one extension block
        f.recovered(
                IndexFixture.routerStored(1, 0, DEVICE, null, new long[] {1, 2}, new long[] {11, 12}),
                IndexFixture.routerStored(1, 0, HOST_PINNED, 2L, new long[] {3}, new long[] {13}));
        assertThat(f.matchHashes(11, 12, 13).get(w(1, 0))).isEqualTo(new MatchResult.WorkerMatch(w(1, 0), 2, 3, 3));
    }

    @Test
    void tiersAccumulateDeviceThenHostThenDiskThenExternal() {
        f.store(w(1, 0), null, new long[] {101, 102}, 1, 2);
        f.store(w(1, 0), HOST_PINNED, 102L, new long[] {103}, 3);
        f.store(w(1, 0), DISK, 103L, new long[] {104, 105}, 4, 5);
        f.store(w(1, 0), EXTERNAL, 105L, new long[] {106}, 6);
        f.store(w(1, 0), EXTERNAL, 106L, new long[] {107}, 99); // content differs from the query

        MatchResult.WorkerMatch m = f.match(1, 2, 3, 4, 5, 6, 7).get(w(1, 0));
        assertThat(m).isEqualTo(new MatchResult.WorkerMatch(w(1, 0), 2, 3, 6));
        OverlapScores.InstanceTiers tiers = OverlapScores.of(f.index.findMatches(f.local(1, 2, 3, 4, 5, 6, 7)), 4)
                .instances()
                .get(1L);
        assertThat(tiers.gpu()).isLessThanOrEqualTo(tiers.cpu());
        assertThat(tiers.cpu()).isLessThanOrEqualTo(tiers.disk());
        assertThat(tiers).isEqualTo(new OverlapScores.InstanceTiers(24, 8, Map.of(0, 8L), 12, 24));
    }

    @Test
    void lowerTierRunContinuesWhereTheDeviceRunStopped() {
        // the host tier also holds blocks 1 and 2, but the device match already covers them: host adds only 3
        f.store(w(1, 0), null, new long[] {101, 102}, 1, 2);
        f.store(w(1, 0), HOST_PINNED, null, new long[] {101, 102, 103}, 1, 2, 3);
        assertThat(f.match(1, 2, 3).get(w(1, 0))).isEqualTo(new MatchResult.WorkerMatch(w(1, 0), 2, 3, 3));
        // a worker with nothing on device starts at the root of the host tier
        f.store(w(2, 0), HOST_PINNED, null, new long[] {101, 102}, 1, 2);
        f.store(w(2, 0), DISK, 102L, new long[] {103}, 3);
        assertThat(f.match(1, 2, 3).get(w(2, 0))).isEqualTo(new MatchResult.WorkerMatch(w(2, 0), 0, 2, 3));
        // ported root_workers_only_include_matching_root_edges
        assertThat(f.match(2, 3)).isEmpty();
    }

    @Test
    void lowerTierStoreWithUnknownParentIsReachableOnlyThroughContinuation() {
        f.store(w(1, 0), HOST_PINNED, 102L, new long[] {103}, 3); // parent unknown to anyone: accepted
        assertThat(f.applied("stored", ApplyStatus.OK)).isEqualTo(1);
        assertThat(f.match(3)).as("not a root block").isEmpty();
        assertThat(f.match(1, 2, 3)).isEmpty();

        f.store(w(1, 0), null, new long[] {101, 102}, 1, 2);
        assertThat(f.match(1, 2, 3).get(w(1, 0))).isEqualTo(new MatchResult.WorkerMatch(w(1, 0), 2, 3, 3));
        // ported missing_parent_tail_queries_exactly_from_last_matched_hash: another parent does not reach it
        f.store(w(1, 0), null, new long[] {201, 202}, 1, 5);
        assertThat(f.match(1, 5, 3).get(w(1, 0))).isEqualTo(new MatchResult.WorkerMatch(w(1, 0), 2, 2, 2));
    }

    @Test
    void lowerTierContinuationOnlyForTheWorkerThatHoldsIt() {
        // ported removing_one_owner_preserves_shared_edge_for_other_workers / shared worker traversal
        f.store(w(1, 0), null, new long[] {101}, 1);
        f.store(w(2, 0), null, new long[] {101}, 1);
        f.store(w(1, 0), DISK, 101L, new long[] {102, 103}, 2, 3);
        f.store(w(2, 0), DISK, 101L, new long[] {102}, 2);

        Map<WorkerKey, MatchResult.WorkerMatch> m = f.match(1, 2, 3);
        assertThat(m.get(w(1, 0))).isEqualTo(new MatchResult.WorkerMatch(w(1, 0), 1, 1, 3));
        assertThat(m.get(w(2, 0))).isEqualTo(new MatchResult.WorkerMatch(w(2, 0), 1, 1, 2));
        f.remove(w(1, 0), DISK, 102);
        m = f.match(1, 2, 3);
        assertThat(m.get(w(1, 0)).diskBlocks()).isEqualTo(1);
        assertThat(m.get(w(2, 0)).diskBlocks()).isEqualTo(2);
    }

    @Test
    void emptyQueryAndNoLowerTiers() {
        // ported query_lower_tiers_returns_empty_when_no_tiers_allocated
        assertThat(f.index.findMatches(new long[0]).workers()).isEmpty();
        f.store(w(1, 0), null, new long[] {101}, 1);
        assertThat(f.match(1).get(w(1, 0))).isEqualTo(new MatchResult.WorkerMatch(w(1, 0), 1, 1, 1));
        assertThat(f.index.findMatches(new long[0]).workers()).isEmpty();
    }

    // ---- conversion of BlockStored (compatibility.md, Engine event streams)
    // ---------------------------------------------------------------

    @Test
    void blockSizeMismatchStoresNothing() {
        f.submit(
                w(1, 0),
                new BlockStored(
                        new long[] {101}, false, 0, new int[] {1, 1, 1, 1, 1, 1, 1, 1}, 8, null, DEVICE, null, false));
        assertThat(f.applied("stored", ApplyStatus.BLOCK_SIZE_MISMATCH)).isEqualTo(1);
        assertThat(f.index.stats().memberships()).isZero();
    }

    @Test
    void tooFewTokensStoresTheBlocksBeforeAndCountsInvalid() {
        f.submit(
                w(1, 0),
                new BlockStored(
                        new long[] {101, 102}, false, 0, new int[] {1, 1, 1, 1, 2, 2}, 4, null, DEVICE, null, false));
        assertThat(f.applied("stored", ApplyStatus.INVALID_BLOCK)).isEqualTo(1);
        assertThat(f.deviceScores(1, 2)).containsExactly(entry(w(1, 0), 1));
    }

    @Test
    void loraNameSeedsTheLocalHash() {
        f.submit(
                w(1, 0), new BlockStored(new long[] {101}, false, 0, f.tokens(1), 4, "adapter-a", DEVICE, null, false));
        assertThat(f.match(1)).as("base-model query").isEmpty();
        assertThat(f.index
                        .findMatches(f.index.localHashes(f.tokens(1), "adapter-b", null))
                        .workers())
                .isEmpty();
        assertThat(f.index
                        .findMatches(f.index.localHashes(f.tokens(1), "adapter-a", null))
                        .workers())
                .extracting(MatchResult.WorkerMatch::deviceBlocks)
                .containsExactly(1);
    }

    @Test
    void eagleBlocksHashOneExtraToken() {
        // bigram pairs flattened: block i covers tokens [4i, 4i + 5)
        int[] tokens = {1, 2, 3, 4, 5, 6, 7, 8, 9};
        f.submit(w(1, 0), new BlockStored(new long[] {101, 102}, false, 0, tokens, 4, null, DEVICE, null, true));
        long seed = BlockHasher.seed(null);
        long first = BlockHasher.hashBlock(tokens, 0, 5, seed, null);
        long second = BlockHasher.hashBlock(tokens, 4, 5, seed, null);
        assertThat(f.matchHashes(first, second).get(w(1, 0)).deviceBlocks()).isEqualTo(2);
        assertThat(f.match(1, 2)).isEmpty();
    }

    @Test
    void multimodalHashesAreMixedPerBlock() {
        long[][] mm = {null, {77L}};
        f.submit(w(1, 0), new BlockStored(new long[] {101, 102}, false, 0, f.tokens(1, 2), 4, null, DEVICE, mm, false));
        long seed = BlockHasher.seed(null);
        long second = BlockHasher.hashBlock(f.tokens(1, 2), 4, 4, seed, new long[] {77L});
        assertThat(f.deviceScores(1, 2)).containsExactly(entry(w(1, 0), 1));
        assertThat(f.matchHashes(f.local(1)[0], second).get(w(1, 0)).deviceBlocks())
                .isEqualTo(2);
    }

    @Test
    void cacheSaltIsIgnoredUnlessMixingIsOn() {
        assertThat(f.index.localHashes(f.tokens(1, 2), null, "salt")).containsExactly(f.local(1, 2));
        try (IndexWriters writers = new IndexWriters(1)) {
            ModelIndex salted = new ModelIndex("m", "t", 4, new IndexOptions(true, 1), writers);
            assertThat(salted.localHashes(f.tokens(1, 2), null, "salt")).doesNotContain(f.local(1, 2));
            assertThat(salted.localHashes(f.tokens(1, 2, 3), null, null)).containsExactly(f.local(1, 2, 3));
        }
    }

    @Test
    void statsCountEveryEventTypeAndStatus() {
        f.store(w(1, 0), null, new long[] {101}, 1);
        f.clear(w(1, 0));
        IndexStats stats = f.index.stats();
        assertThat(stats.applied()).containsOnlyKeys("stored", "removed", "cleared");
        assertThat(stats.applied().get("stored"))
                .containsKeys(
                        "ok",
                        "parent_block_not_found",
                        "block_not_found",
                        "duplicate_store",
                        "block_size_mismatch",
                        "invalid_block");
        assertThat(stats.applied().get("stored").get("ok")).isEqualTo(1);
        assertThat(stats.applied().get("cleared").get("ok")).isEqualTo(1);
        assertThat(stats.blocks()).isZero();
        assertThat(stats.memberships()).isZero();
    }
}

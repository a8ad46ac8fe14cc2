package io.kvindexer.indexer.index;

import java.util.Map;

/**
 * A snapshot of one index's size and event counters.
 *
 * @param blocks       distinct blocks held by anyone (nodes)
 * @param memberships  (worker, block, tier) memberships
 * @param applied      event type ({@code stored}, {@code removed}, {@code cleared}) → status label → count
 */
public record IndexStats(long blocks, long memberships, Map<String, Map<String, Long>> applied) {}

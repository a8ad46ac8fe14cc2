package io.kvindexer.indexer.event;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What one engine stream has taught about its KV-cache groups (hybrid models): the kind each {@code group_idx}
 * announced on its stores, so that its removals, which carry only the group index, are filtered the same way.
 *
 * <p>State of one stream (one listener, so one publisher and one dp rank): give each listener its own instance
 * and pass it to {@link EngineEventDecoder#decode(byte[], CacheGroups)}; a new instance forgets what an earlier
 * stream taught. Thread-safe, though one listener thread is the only writer in practice.
 *
 * <p>Only full-attention groups are prefix-cache state a router can use: {@code full_attention},
 * {@code mla_attention}, {@code sink_full_attention}. Events without a kind are admitted in group 0 or without a
 * group; a group other than 0 whose kind was never announced is skipped (it cannot be vouched for).
 */
public final class CacheGroups {

    private static final Set<String> MAIN_KINDS = Set.of("full_attention", "mla_attention", "sink_full_attention");
    /** more distinct groups than any real model has: a hostile stream cannot grow it without bound */
    private static final int MAX_LEARNED = 4096;

    private final Map<Long, Boolean> learned = new ConcurrentHashMap<>();

    /** True for the attention kinds whose blocks the index keeps. */
    public static boolean isMainKind(String kind) {
        return MAIN_KINDS.contains(kind);
    }

    /** Remembers the kind a store announced for its group. */
    void learn(long group, String kind) {
        if (learned.size() < MAX_LEARNED || learned.containsKey(group)) {
            learned.put(group, isMainKind(kind));
        }
    }

    /**
     * Whether an event belongs to a group the index keeps.
     *
     * @param kind  the event's {@code kv_cache_spec_kind}, or null
     * @param group the event's {@code group_idx}, or null when absent or nil
     */
    boolean admits(String kind, Long group) {
        if (kind != null) {
            return isMainKind(kind);
        }
        if (group == null) {
            return true;
        }
        Boolean main = learned.get(group);
        if (main != null) {
            return main;
        }
        return group == 0;
    }
}

package io.kvindexer.indexer.index;

import io.kvindexer.indexer.common.StorageTier;

/**
 * A membership (worker, block, tier) as it is stored on a block node: one int, the worker's slot (see
 * {@link WorkerSlots}) and the tier's ordinal packed as {@code slot << 2 | tier}. Four tiers fit in two bits.
 */
final class MembershipCode {

    static final int TIER_BITS = 2;
    static final int TIERS = StorageTier.values().length;
    private static final int TIER_MASK = (1 << TIER_BITS) - 1;

    static {
        if (TIERS > 1 << TIER_BITS) {
            throw new ExceptionInInitializerError("more storage tiers than the membership code has bits for");
        }
    }

    private MembershipCode() {}

    static int of(int slot, int tier) {
        return slot << TIER_BITS | tier;
    }

    static int slot(int code) {
        return code >>> TIER_BITS;
    }

    static int tier(int code) {
        return code & TIER_MASK;
    }
}

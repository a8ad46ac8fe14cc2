package io.kvindexer.indexer.expiry;

import io.kvindexer.indexer.common.Durations;
import io.kvindexer.indexer.common.StorageTier;
import java.time.Duration;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.StringJoiner;

/**
 * Bounds for publishers that never remove what they store ({@code --block-ttl}, {@code --max-blocks-per-worker}):
 * a block on a tier with a TTL that is not stored again within it expires, and a worker holding more than
 * {@code maxBlocksPerWorker} blocks on one tier loses its oldest-stored ones on that tier down to 90 % of the cap.
 *
 * @param ttl                tier → time to live; tiers not in it never expire
 * @param maxBlocksPerWorker blocks one worker (instance, dp rank) may hold per tier; 0 = no cap
 */
public record ExpiryPolicy(Map<StorageTier, Duration> ttl, long maxBlocksPerWorker) {

    /** Neither bound: the index keeps what the engines stored until they remove it (Dynamo's behaviour). */
    public static final ExpiryPolicy NONE = new ExpiryPolicy(Map.of(), 0);

    public ExpiryPolicy {
        EnumMap<StorageTier, Duration> copy = new EnumMap<>(StorageTier.class);
        ttl.forEach((tier, d) -> {
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(
                        "the TTL of tier " + tier.jsonName() + " must be > 0, got " + Durations.format(d));
            }
            copy.put(tier, d);
        });
        ttl = Collections.unmodifiableMap(copy);
        if (maxBlocksPerWorker < 0) {
            throw new IllegalArgumentException("max blocks per worker must be >= 0, got " + maxBlocksPerWorker);
        }
    }

    /** Whether anything is bounded (otherwise nothing is tracked and nothing costs memory). */
    public boolean enabled() {
        return !ttl.isEmpty() || maxBlocksPerWorker > 0;
    }

    /** Whether the memberships of this tier are followed (it has a TTL, or there is a cap). */
    public boolean tracks(StorageTier tier) {
        return maxBlocksPerWorker > 0 || ttl.containsKey(tier);
    }

    /** Whether blocks of this tier can go for this reason: a TTL for the tier, or the cap. */
    public boolean canExpire(StorageTier tier, ExpiryReason reason) {
        return switch (reason) {
            case TTL -> ttl.containsKey(tier);
            case CAPACITY -> maxBlocksPerWorker > 0;
        };
    }

    /** How many blocks a capped tier is cut down to: 90 % of the cap, so a worker at the cap is not evicted per store. */
    public long evictDownTo() {
        return maxBlocksPerWorker - Math.max(1, maxBlocksPerWorker / 10);
    }

    /**
     * Parses {@code TIER=DURATION[,TIER=DURATION…]} with the tiers named as in {@code /dump}'s {@code storage_tier}
     * ({@code device}, {@code host_pinned}, {@code disk}, {@code external}) and durations as {@link Durations}
     * spells them; null or blank = no TTL. {@link IllegalArgumentException} names the part at fault.
     */
    public static Map<StorageTier, Duration> parseTtl(String text) {
        Map<StorageTier, Duration> out = new EnumMap<>(StorageTier.class);
        if (text == null || text.isBlank()) {
            return out;
        }
        for (String part : text.split(",", -1)) {
            String p = part.strip();
            int eq = p.indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException("'" + p + "' is not TIER=DURATION (e.g. host_pinned=10m)");
            }
            String name = p.substring(0, eq).strip();
            StorageTier tier = StorageTier.fromJsonName(name);
            if (tier == null) {
                throw new IllegalArgumentException("unknown tier '" + name + "' (expected " + tierNames() + ")");
            }
            if (out.containsKey(tier)) {
                throw new IllegalArgumentException("tier " + name + " is given twice");
            }
            Duration d = Durations.parse(p.substring(eq + 1));
            if (d.isZero()) {
                throw new IllegalArgumentException("the TTL of tier " + name + " must be > 0");
            }
            out.put(tier, d);
        }
        return out;
    }

    /** The {@code --block-ttl} spelling of {@link #ttl} (empty when none). */
    public String ttlText() {
        StringJoiner j = new StringJoiner(",");
        ttl.forEach((tier, d) -> j.add(tier.jsonName() + "=" + Durations.format(d)));
        return j.toString();
    }

    private static String tierNames() {
        StringJoiner j = new StringJoiner(", ");
        for (StorageTier t : StorageTier.values()) {
            j.add(t.jsonName());
        }
        return j.toString();
    }
}

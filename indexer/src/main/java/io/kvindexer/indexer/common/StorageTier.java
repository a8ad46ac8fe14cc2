package io.kvindexer.indexer.common;

/**
 * Where a cached block lives. The order is the order of the tiered match: device first, then the lower
 * tiers, each continuing the prefix where the previous one stopped.
 */
public enum StorageTier {
    DEVICE("device"),
    HOST_PINNED("host_pinned"),
    DISK("disk"),
    EXTERNAL("external");

    private static final StorageTier[] VALUES = values();

    private final String jsonName;

    StorageTier(String jsonName) {
        this.jsonName = jsonName;
    }

    /** The name used in {@code /dump} RouterEvents ({@code storage_tier}). */
    public String jsonName() {
        return jsonName;
    }

    public static StorageTier ofOrdinal(int ordinal) {
        return VALUES[ordinal];
    }

    /** Parses a {@code storage_tier} value of a RouterEvent; null when unknown. */
    public static StorageTier fromJsonName(String name) {
        for (StorageTier t : VALUES) {
            if (t.jsonName.equals(name)) {
                return t;
            }
        }
        return null;
    }

    /**
     * Maps an engine event's {@code medium}, case-insensitively (see {@code docs/compatibility.md}, "Storage media"):
     * absent, nil or empty, {@code GPU}, {@code DEVICE} → device; {@code CPU}, {@code CPU_PINNED},
     * {@code CPU_TIER1} → host-pinned; {@code CPU_TIER2}, {@code DISK}, {@code NVME}, {@code STORAGE}, {@code FS}
     * → disk; {@code EXTERNAL}, {@code NETWORK}, {@code REMOTE}, {@code SHARED}, {@code SHARED_STORAGE},
     * {@code OBJECT_STORE}, {@code OBJ} → external; anything else → external as well (the lowest tier: it never
     * claims a faster copy than the engine has), which {@link #isUnknownMedium} lets the caller count.
     */
    public static StorageTier fromMedium(String medium) {
        StorageTier known = knownMedium(medium);
        return known != null ? known : EXTERNAL;
    }

    /** True when {@link #fromMedium} falls back to the external tier for a medium outside the table. */
    public static boolean isUnknownMedium(String medium) {
        return knownMedium(medium) == null;
    }

    private static StorageTier knownMedium(String medium) {
        if (medium == null || medium.isEmpty()) {
            return DEVICE;
        }
        // toUpperCase returns the same instance when there is nothing to change (the usual, upper-case wire value)
        return switch (medium.toUpperCase(java.util.Locale.ROOT)) {
            case "GPU", "DEVICE" -> DEVICE;
            case "CPU", "CPU_PINNED", "CPU_TIER1" -> HOST_PINNED;
            case "CPU_TIER2", "DISK", "NVME", "STORAGE", "FS" -> DISK;
            case "EXTERNAL", "NETWORK", "REMOTE", "SHARED", "SHARED_STORAGE", "OBJECT_STORE", "OBJ" -> EXTERNAL;
            default -> null;
        };
    }
}

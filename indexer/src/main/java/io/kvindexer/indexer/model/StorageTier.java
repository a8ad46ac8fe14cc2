package io.kvindexer.indexer.model;

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
     * Maps an engine event's {@code medium} (design.md §2): absent, empty, {@code GPU} or {@code DEVICE} → device;
     * {@code CPU}, {@code CPU_PINNED}, {@code CPU_TIER1} → host-pinned (Dynamo G2 wrongly indexes vLLM's
     * {@code CPU} as device); {@code DISK}, {@code CPU_TIER2}, {@code NVME} → disk; anything else → external.
     */
    public static StorageTier fromMedium(String medium) {
        if (medium == null || medium.isEmpty()) {
            return DEVICE;
        }
        return switch (medium) {
            case "GPU", "DEVICE", "gpu" -> DEVICE;
            case "CPU", "CPU_PINNED", "CPU_TIER1", "cpu" -> HOST_PINNED;
            case "DISK", "CPU_TIER2", "NVME", "disk" -> DISK;
            default -> EXTERNAL;
        };
    }

    /** True when {@link #fromMedium} had to fall back to the external tier for an unrecognised medium. */
    public static boolean isUnknownMedium(String medium) {
        if (medium == null || medium.isEmpty()) {
            return false;
        }
        return switch (medium) {
            case "GPU", "DEVICE", "gpu", "CPU", "CPU_PINNED", "CPU_TIER1", "cpu", "DISK", "CPU_TIER2", "NVME", "disk",
                 "EXTERNAL", "NETWORK", "REMOTE", "SHARED" -> false;
            default -> true;
        };
    }
}

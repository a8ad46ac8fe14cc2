package io.kvindexer.operator.crd.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code spec.blockTtl}: the indexer's {@code --block-ttl}, one optional duration per storage tier. A block on a tier
 * with a TTL that its engine does not store again within it is removed from the index: for publishers that never
 * send removals (LMCache's CPU tier, shared storage).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public record BlockTtl(
        @JsonPropertyDescription("TTL of device (GPU) blocks, e.g. 10m.") @Pattern(DURATION)
        String device,

        @JsonPropertyDescription("TTL of host-pinned (CPU) blocks, e.g. 30m.") @Pattern(DURATION)
        String hostPinned,

        @JsonPropertyDescription("TTL of disk blocks, e.g. 6h.") @Pattern(DURATION)
        String disk,

        @JsonPropertyDescription("TTL of external (shared storage) blocks, e.g. 6h.") @Pattern(DURATION)
        String external) {

    /**
     * A whole number above 0 and a unit, as the indexer reads it (500ms, 30s, 10m, 6h), of at most 12 digits in ms,
     * 9 in s, 8 in m and 6 in h: each at least 31 years, and each below the indexer's own limit (2^63-1 ns, 2562047h),
     * so that no TTL the schema takes stops the replicas at their start.
     */
    public static final String DURATION = "^([1-9][0-9]{0,11}ms|[1-9][0-9]{0,8}s|[1-9][0-9]{0,7}m|[1-9][0-9]{0,5}h)$";

    /** The {@code --block-ttl} value ({@code device=10m,host_pinned=30m}); empty when no tier has a TTL. */
    public String flag() {
        List<String> parts = new ArrayList<>();
        add(parts, "device", device);
        add(parts, "host_pinned", hostPinned);
        add(parts, "disk", disk);
        add(parts, "external", external);
        return String.join(",", parts);
    }

    /** The first tier whose value is not a duration, as a message naming the field; null when all are. */
    public String problem() {
        String[][] fields = {{"device", device}, {"hostPinned", hostPinned}, {"disk", disk}, {"external", external}};
        for (String[] f : fields) {
            if (f[1] != null && !f[1].matches(DURATION)) {
                return "spec.blockTtl." + f[0] + " must be a duration above 0 like 500ms, 30s, 10m or 6h (at most"
                        + " 999999999999ms, 999999999s, 99999999m or 999999h), got " + f[1];
            }
        }
        return null;
    }

    private static void add(List<String> parts, String tier, String ttl) {
        if (ttl != null) {
            parts.add(tier + "=" + ttl);
        }
    }
}

package io.kvindexer.indexer.http;

import com.fasterxml.jackson.core.JsonGenerator;
import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.index.MatchResult;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.LongPredicate;

/**
 * The answer of {@code POST /query_tiered_by_hash}, Dynamo's lossless tiered match for a remote primary
 * ({@code --remote-indexer-url}), in blocks, not tokens:
 * <pre>
 * {"block_size": n, "tiered": {"device": {"scores": [[{"worker_id": u64, "dp_rank": u32}, blocks], ...],
 *                                         "frequencies": []},
 *                              "lower_tier": [["host_pinned", {"hits": [[worker, blocks], ...]}],
 *                                             ["disk", {...}], ["external", {...}]]}}
 * </pre>
 * plus ours, additive: {@code "instances": {"<id>": {"exact": bool}}} for every instance named in {@code tiered}.
 * {@code scores} holds the workers with a device match; a lower tier's {@code hits} are the blocks that tier added
 * to each worker's run where the previous tiers stopped, and list every worker whose run is under way by then (a
 * device match, or a root block on this or an earlier lower tier), with 0 when the tier added nothing, as Dynamo's
 * lower-tier walk reports its continuations. All three lower tiers are always listed.
 *
 * @param device   workers with their device-tier blocks (all &gt; 0)
 * @param lowerTier hits per lower tier, in the order host-pinned, disk, external
 */
record TieredScores(int blockSize, List<Hit> device, List<List<Hit>> lowerTier) {

    /** One worker and a block count. */
    record Hit(WorkerKey worker, int blocks) {}

    static final StorageTier[] LOWER_TIERS = {StorageTier.HOST_PINNED, StorageTier.DISK, StorageTier.EXTERNAL};

    static TieredScores of(MatchResult match, int blockSize) {
        List<Hit> device = new ArrayList<>();
        List<List<Hit>> lower = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        for (MatchResult.WorkerMatch m : match.workers()) {
            int external = match.externalBlocks(m.worker());
            // cumulative runs through each tier: device <= host <= disk <= external
            int[] through = {m.deviceBlocks(), m.hostBlocks(), m.diskBlocks() - external, m.diskBlocks()};
            if (through[0] > 0) {
                device.add(new Hit(m.worker(), through[0]));
            }
            for (int t = 1; t < through.length; t++) {
                if (through[t] > 0) { // the run is under way by the end of this tier
                    lower.get(t - 1).add(new Hit(m.worker(), through[t] - through[t - 1]));
                }
            }
        }
        return new TieredScores(
                blockSize,
                List.copyOf(device),
                List.of(List.copyOf(lower.get(0)), List.copyOf(lower.get(1)), List.copyOf(lower.get(2))));
    }

    void writeJson(JsonGenerator g, LongPredicate exact) throws IOException {
        g.writeStartObject();
        g.writeNumberField("block_size", blockSize);
        g.writeObjectFieldStart("tiered");
        g.writeObjectFieldStart("device");
        g.writeFieldName("scores");
        hits(g, device);
        g.writeArrayFieldStart("frequencies");
        g.writeEndArray();
        g.writeEndObject();
        g.writeArrayFieldStart("lower_tier");
        for (int t = 0; t < LOWER_TIERS.length; t++) {
            g.writeStartArray();
            g.writeString(LOWER_TIERS[t].jsonName());
            g.writeStartObject();
            g.writeFieldName("hits");
            hits(g, lowerTier.get(t));
            g.writeEndObject();
            g.writeEndArray();
        }
        g.writeEndArray();
        g.writeEndObject();
        g.writeObjectFieldStart("instances");
        for (long instance : instances()) {
            g.writeObjectFieldStart(Long.toUnsignedString(instance));
            g.writeBooleanField("exact", exact.test(instance));
            g.writeEndObject();
        }
        g.writeEndObject();
        g.writeEndObject();
    }

    /** Every instance named in the answer, once, in unsigned order. */
    private Set<Long> instances() {
        Set<Long> ids = new TreeSet<>(Long::compareUnsigned);
        device.forEach(h -> ids.add(h.worker().instanceId()));
        lowerTier.forEach(hits -> hits.forEach(h -> ids.add(h.worker().instanceId())));
        return ids;
    }

    private static void hits(JsonGenerator g, List<Hit> hits) throws IOException {
        g.writeStartArray();
        for (Hit h : hits) {
            g.writeStartArray();
            g.writeStartObject();
            JsonOut.u64Field(g, "worker_id", h.worker().instanceId());
            g.writeNumberField("dp_rank", Integer.toUnsignedLong(h.worker().dpRank()));
            g.writeEndObject();
            g.writeNumber(h.blocks());
            g.writeEndArray();
        }
        g.writeEndArray();
    }
}

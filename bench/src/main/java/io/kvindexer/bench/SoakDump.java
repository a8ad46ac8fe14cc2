package io.kvindexer.bench;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.dump.BinaryDump;
import io.kvindexer.indexer.dump.BinaryDumpReader;
import it.unimi.dsi.fastutil.ints.Int2ObjectOpenHashMap;
import it.unimi.dsi.fastutil.longs.LongOpenHashSet;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * The index's content as the soak compares it: the binary {@code /dump} read into block-hash sets per (instance,
 * tier), and the comparison with the stand-ins' ground truth. Under a TTL the comparison of that tier is a bound:
 * the index holds no block the engine does not, and every block stored more recently than the TTL (less a margin).
 */
final class SoakDump {

    /** instance → tier → block hashes (dp rank 0: the stand-ins have one rank each) */
    final Map<Long, EnumMap<StorageTier, LongOpenHashSet>> held = new HashMap<>();

    static SoakDump fetch(HttpClient http, String baseUrl) throws IOException, InterruptedException {
        HttpResponse<InputStream> r = http.send(
                HttpRequest.newBuilder(URI.create(baseUrl + "/dump"))
                        .header("Accept", BinaryDump.MEDIA_TYPE)
                        .timeout(Duration.ofMinutes(2))
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        SoakDump out = new SoakDump();
        try (InputStream body = r.body()) {
            if (r.statusCode() != 200) {
                throw new IOException("/dump answered " + r.statusCode());
            }
            BinaryDumpReader.read(body, out.visitor());
        }
        return out;
    }

    Set<Long> blocks(long instance, StorageTier tier) {
        var tiers = held.get(instance);
        LongOpenHashSet s = tiers == null ? null : tiers.get(tier);
        return s == null ? Set.of() : s;
    }

    long memberships() {
        return held.values().stream()
                .flatMap(t -> t.values().stream())
                .mapToLong(LongOpenHashSet::size)
                .sum();
    }

    /**
     * Null when the index holds exactly what {@code engines} hold on every tier but {@code ttlTier}, and on that tier
     * nothing they do not hold and everything in {@code recentHost}; else the first difference, as a sentence.
     */
    static String difference(
            SoakDump dump, Iterable<SoakEngine> engines, StorageTier ttlTier, Map<Long, Set<Long>> recent) {
        long known = 0;
        for (SoakEngine e : engines) {
            known++;
            for (StorageTier t : StorageTier.values()) {
                Set<Long> truth = e.truth(t);
                Set<Long> index = dump.blocks(e.instanceId, t);
                if (t != ttlTier) {
                    if (!truth.equals(index)) {
                        return "engine " + e.instanceId + " " + t.jsonName() + ": index " + index.size()
                                + " blocks, engine "
                                + truth.size() + " (" + missing(truth, index) + " missing, " + missing(index, truth)
                                + " extra)";
                    }
                    continue;
                }
                long extra = missing(index, truth);
                Set<Long> mustHave = recent.getOrDefault(e.instanceId, Set.of());
                long lost = missing(mustHave, index);
                if (extra > 0 || lost > 0) {
                    return "engine " + e.instanceId + " " + t.jsonName() + ": " + extra + " blocks the engine does not"
                            + " hold, " + lost + " stored within the TTL missing";
                }
            }
        }
        if (dump.held.size() > known) {
            return "the index holds blocks of " + (dump.held.size() - known) + " unknown instances";
        }
        return null;
    }

    private static long missing(Set<Long> from, Set<Long> in) {
        return from.stream().filter(h -> !in.contains(h)).count();
    }

    private BinaryDumpReader.Visitor visitor() {
        return new BinaryDumpReader.Visitor() {
            private final Int2ObjectOpenHashMap<Long> workers = new Int2ObjectOpenHashMap<>();
            private long block;

            @Override
            public void index(String modelName, String tenantId, int blockSize) {
                workers.clear();
            }

            @Override
            public void worker(int ref, long instanceId, int dpRank) {
                workers.put(ref, Long.valueOf(instanceId));
            }

            @Override
            public void block(boolean hasParent, long parentBlockHash, long blockHash, long localHash) {
                block = blockHash;
            }

            @Override
            public void owner(int workerRef, StorageTier tier) {
                held.computeIfAbsent(workers.get(workerRef), w -> new EnumMap<>(StorageTier.class))
                        .computeIfAbsent(tier, t -> new LongOpenHashSet())
                        .add(block);
            }

            @Override
            public void frameEnd() {}

            @Override
            public void indexEnd() {}

            @Override
            public void end() {}
        };
    }
}

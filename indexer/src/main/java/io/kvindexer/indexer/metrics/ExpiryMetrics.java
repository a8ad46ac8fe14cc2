package io.kvindexer.indexer.metrics;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.expiry.BlockExpiry;
import io.kvindexer.indexer.expiry.ExpiryReason;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;

/**
 * The block expiry's series, registered only when a bound is configured: what it removed per tier and reason, and
 * the bounds themselves (so a dashboard or the console can say why blocks go).
 */
final class ExpiryMetrics {

    private ExpiryMetrics() {}

    static void register(PrometheusRegistry registry, BlockExpiry expiry) {
        CounterWithCallback.builder()
                .name("dynamo_kvindexer_blocks_expired")
                .help("Blocks the indexer removed without an engine removal, by tier and reason (ttl, capacity)")
                .labelNames("tier", "reason")
                .callback(cb -> {
                    // only the series the flags can move: no capacity series with a TTL alone, no ttl series
                    // for a tier without a TTL
                    for (StorageTier t : StorageTier.values()) {
                        for (ExpiryReason r : ExpiryReason.values()) {
                            if (expiry.policy().canExpire(t, r)) {
                                cb.call(expiry.expired(t, r), t.jsonName(), r.label());
                            }
                        }
                    }
                })
                .register(registry);
        GaugeWithCallback.builder()
                .name("dynamo_kvindexer_block_ttl_seconds")
                .help("--block-ttl: time to live of a block not stored again, per tier that has one")
                .labelNames("tier")
                .callback(cb -> expiry.policy().ttl().forEach((tier, ttl) -> cb.call(seconds(ttl), tier.jsonName())))
                .register(registry);
        GaugeWithCallback.builder()
                .name("dynamo_kvindexer_max_blocks_per_worker")
                .help("--max-blocks-per-worker: blocks one worker may hold per tier (0: no cap)")
                .callback(cb -> cb.call(expiry.policy().maxBlocksPerWorker()))
                .register(registry);
    }

    private static double seconds(Duration d) {
        return d.toNanos() / 1e9;
    }
}

package io.kvindexer.indexer;

import io.kvindexer.indexer.expiry.ExpiryPolicy;
import picocli.CommandLine.Option;

/** The memory-bound flags for publishers that never remove what they store, mixed into {@link IndexerCli}. */
public final class ExpiryOptions {

    @Option(
            names = "--block-ttl",
            paramLabel = "TIER=DURATION[,...]",
            description = "a block on TIER (device, host_pinned, disk, external) not stored again within DURATION"
                    + " (500ms, 30s, 10m, 6h) is removed; storing it again starts its time over, a restart or a"
                    + " recovery does not (default: no TTL)")
    String blockTtl;

    @Option(
            names = "--max-blocks-per-worker",
            paramLabel = "N",
            description = "blocks one worker (instance, dp rank) may hold per tier; a store above N removes its"
                    + " oldest-stored blocks on that tier down to 90%% of N (default: no cap)")
    long maxBlocksPerWorker;

    ExpiryPolicy policy() throws ConfigException {
        try {
            return new ExpiryPolicy(ExpiryPolicy.parseTtl(blockTtl), maxBlocksPerWorker);
        } catch (IllegalArgumentException e) {
            String flag = maxBlocksPerWorker < 0 ? "--max-blocks-per-worker" : "--block-ttl";
            throw new ConfigException("invalid value for " + flag + ": " + e.getMessage());
        }
    }
}

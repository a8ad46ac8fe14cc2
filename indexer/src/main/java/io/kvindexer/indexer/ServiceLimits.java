package io.kvindexer.indexer;

/**
 * Limits a hostile or buggy client cannot exceed (request body sizes are in {@link IndexerConfig}). Each has a flag
 * (see {@link HardeningOptions}); the defaults stay above anything a real deployment sends.
 *
 * @param maxQueryTokens         token ids in one {@code /query} (and block hashes in one {@code /query_by_hash})
 * @param maxRanksPerInstance    dp ranks (listeners) one instance may register
 * @param maxListeners           listeners (registered (instance, dp rank) pairs) in total
 * @param maxPeers               peer URLs kept by {@code /register_peer} and {@code --peers}
 */
public record ServiceLimits(int maxQueryTokens, int maxRanksPerInstance, int maxListeners, int maxPeers) {

    /** 4 Mi tokens is what fits in Dynamo's 8 MiB /query body; 256 ranks, 4096 listeners, 64 peers. */
    public static final ServiceLimits DEFAULTS = new ServiceLimits(4 * 1024 * 1024, 256, 4096, 64);

    public ServiceLimits {
        if (maxQueryTokens < 1 || maxRanksPerInstance < 1 || maxListeners < 1 || maxPeers < 1) {
            throw new IllegalArgumentException("every limit must be >= 1");
        }
    }
}

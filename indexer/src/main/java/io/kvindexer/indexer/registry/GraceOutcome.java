package io.kvindexer.indexer.registry;

/**
 * What became of a worker's blocks that {@code --unregister-grace} kept detached: attached again, or dropped and
 * why. Counted per worker rank in {@code dynamo_kvindexer_unregister_grace_total{outcome}} (docs/metrics.md).
 */
public enum GraceOutcome {
    /** the same worker came back at the same endpoint, index and block size: its blocks are attached again */
    REATTACHED("reattached"),
    /** attached again, then the engine turned out to have restarted (its seq started over): dropped */
    RESTART("restart"),
    /** attached again, then the batches since the unregister could not be replayed: dropped */
    GAP("gap"),
    /** came back with another block size */
    BLOCK_SIZE("block_size"),
    /** came back at another endpoint */
    ENDPOINT("endpoint"),
    /** came back for another (model, tenant) */
    INDEX("index"),
    /** did not come back within the grace period */
    EXPIRED("expired");

    private final String label;

    GraceOutcome(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}

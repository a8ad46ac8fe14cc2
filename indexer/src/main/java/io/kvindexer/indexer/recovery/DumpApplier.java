package io.kvindexer.indexer.recovery;

import io.kvindexer.indexer.dump.DumpJson;
import io.kvindexer.indexer.dump.EventJsonException;
import io.kvindexer.indexer.dump.IndexDump;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.index.ModelIndex;
import io.kvindexer.indexer.registry.Registration;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;

/**
 * Feeds a peer's {@code /dump} into our indexes (compatibility.md, Startup, recovery and readiness): each entry's index is created with the dump's block
 * size; an existing index with another size keeps its own (warning), as Dynamo does. The whole document is
 * parsed before anything is applied, so a malformed dump changes nothing.
 */
final class DumpApplier {

    private static final System.Logger LOG = System.getLogger(DumpApplier.class.getName());

    private DumpApplier() {}

    /** Parses the whole JSON dump; its trees go into the indexes when the result's {@code install} runs. */
    static Recovered parse(InputStream body, Indexers indexers, String source) throws IOException {
        List<IndexDump> dumps;
        try {
            dumps = DumpJson.read(body);
        } catch (EventJsonException e) {
            throw new IOException("invalid dump: " + e.getMessage(), e);
        }
        return new Recovered(source, dumps.size(), List.of(), () -> {
            for (IndexDump d : dumps) {
                String sizeProblem = Registration.blockSizeProblem(d.blockSize());
                if (sizeProblem != null) {
                    // a Dynamo peer keeps an index registered with block_size 0; it holds nothing we could use
                    LOG.log(
                            System.Logger.Level.WARNING,
                            "recovered index {0}:{1} skipped: block_size {2}",
                            d.modelName(),
                            d.tenantId(),
                            sizeProblem);
                    continue;
                }
                ModelIndex index = liveIndex(indexers, d.modelName(), d.tenantId(), d.blockSize(), LOG);
                if (index != null) {
                    RouterEventOps.submit(index, d.events());
                }
            }
        });
    }

    /**
     * The live index a recovered one goes into: ours, created with the peer's block size when we have none; when we
     * have one with another block size, ours is kept (logged on {@code log}); null when it vanished meanwhile.
     */
    static ModelIndex liveIndex(
            Indexers indexers, String modelName, String tenantId, int blockSize, System.Logger log) {
        try {
            return indexers.getOrCreate(modelName, tenantId, blockSize);
        } catch (Indexers.BlockSizeMismatchException e) {
            log.log(
                    System.Logger.Level.WARNING,
                    "recovered index {0}:{1} has block_size {2}; keeping ours ({3})",
                    modelName,
                    tenantId,
                    blockSize,
                    e.existing());
            return indexers.get(modelName, tenantId).orElse(null);
        }
    }
}

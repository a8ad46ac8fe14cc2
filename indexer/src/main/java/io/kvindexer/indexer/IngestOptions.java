package io.kvindexer.indexer;

import io.kvindexer.indexer.common.ByteSizes;
import io.kvindexer.indexer.ingest.InflightBytes;
import io.kvindexer.indexer.ingest.IngestSettings;
import picocli.CommandLine.Option;

/** The ingest flags (the bounded receive queue, how long a degraded listener stays so), mixed into {@link IndexerCli}. */
public final class IngestOptions {

    @Option(
            names = "--ingest-queue-bytes",
            paramLabel = "SIZE",
            description = "engine batches received and not yet applied, over all listeners: bytes, 256m, 2g, or a"
                    + " share of the heap such as 12.5%%; at the bound the listeners stop reading and what the engines"
                    + " send meanwhile is replayed as a gap (default: ${DEFAULT-VALUE} of the heap, at least 16m)")
    String queueBytes = IngestSettings.DEFAULT_QUEUE;

    @Option(
            names = "--degraded-hold",
            paramLabel = "DURATION",
            description = "a listener that lost batches it could not replay stays `degraded` this long after the"
                    + " last loss, unless an AllBlocksCleared or an engine restart ends it sooner (default:"
                    + " ${DEFAULT-VALUE})")
    String degradedHold = "1m";

    IngestSettings settings() throws ConfigException {
        long bytes;
        try {
            bytes = IngestSettings.DEFAULT_QUEUE.equals(queueBytes.strip())
                    ? InflightBytes.defaultBudget()
                    : ByteSizes.parse(queueBytes, Runtime.getRuntime().maxMemory());
        } catch (IllegalArgumentException e) {
            throw new ConfigException("invalid value for --ingest-queue-bytes: " + e.getMessage());
        }
        return new IngestSettings(bytes, DurationFlags.parse("--degraded-hold", degradedHold));
    }
}

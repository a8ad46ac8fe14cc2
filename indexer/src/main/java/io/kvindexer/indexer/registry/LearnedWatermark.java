package io.kvindexer.indexer.registry;

import io.kvindexer.indexer.ingest.SequenceWatermark;

/** A registration's watermark and the PUB endpoint its seqs came from. */
record LearnedWatermark(String endpoint, SequenceWatermark watermark) {
    LearnedWatermark(String endpoint) {
        this(endpoint, new SequenceWatermark());
    }
}

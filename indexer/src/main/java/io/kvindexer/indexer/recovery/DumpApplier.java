package io.kvindexer.indexer.recovery;

import io.kvindexer.indexer.index.Indexers;

import java.io.IOException;
import java.io.InputStream;

/** Parses a peer's {@code /dump} and feeds each index's events into ours. */
final class DumpApplier {

    private DumpApplier() {
    }

    static int apply(InputStream body, Indexers indexers) throws IOException {
        throw new UnsupportedOperationException("DumpJson (core-decode) not merged yet");
    }
}

package io.kvindexer.indexer.recovery;

import io.kvindexer.indexer.dump.BinaryDumpWriter;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.index.ModelIndex;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;

/** For tests outside this package: an index's binary dump, as a peer serves it, recovered into other indexes. */
public final class BinaryReplica {

    private BinaryReplica() {}

    /** Writes {@code source} as a one-index binary dump and recovers it into {@code replica}, as a replica does. */
    public static void recover(ModelIndex source, Indexers replica) throws IOException, InterruptedException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (BinaryDumpWriter writer = new BinaryDumpWriter(bytes)) {
            writer.beginIndex(source.modelName(), source.tenantId(), source.blockSize());
            source.dump(writer::membership);
            writer.endIndex();
        }
        int indexes = BinaryDumpApplier.apply(new ByteArrayInputStream(bytes.toByteArray()), replica, 60_000);
        if (indexes != 1) {
            throw new IllegalStateException("recovered " + indexes + " indexes from a dump of one");
        }
    }
}

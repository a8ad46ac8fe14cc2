package io.kvindexer.indexer.recovery;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.dump.BinaryDumpReader;
import io.kvindexer.indexer.dump.SavedRegistration;
import io.kvindexer.indexer.index.IndexOp;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.index.ModelIndex;
import it.unimi.dsi.fastutil.longs.LongArrayList;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Applies a peer's binary {@code /dump} while it downloads, without ever exposing a partial one: each section is
 * staged into a detached index ({@link Indexers#detached}) on the writer threads as its checksummed frames arrive;
 * only after the END frame has verified the whole stream are the staged indexes installed
 * ({@link ModelIndex#adopt}). A truncated or corrupted dump is dropped with its staging, and the live indexes never
 * saw any of it.
 *
 * <p>Each worker's consecutive records whose parent is the previous block become one recovered chain store, so a
 * dump of long sequences costs one op per chain rather than one per block.
 */
final class BinaryDumpApplier implements BinaryDumpReader.Visitor {

    private static final System.Logger LOG = System.getLogger(BinaryDumpApplier.class.getName());

    private final Indexers indexers;
    private final List<ModelIndex> staged = new ArrayList<>();
    private final List<SavedRegistration> registrations = new ArrayList<>();
    private ModelIndex section;
    private final List<WorkerKey> workers = new ArrayList<>();
    private final List<Chain> chains = new ArrayList<>();

    private boolean hasParent;
    private long parentBlockHash;
    private long blockHash;
    private long localHash;

    private BinaryDumpApplier(Indexers indexers) {
        this.indexers = indexers;
    }

    /** Reads, stages and (only when the whole stream is valid) installs; returns the number of indexes. */
    static int apply(InputStream body, Indexers indexers, long timeoutMillis) throws IOException, InterruptedException {
        Recovered r = stage(body, indexers, timeoutMillis, "a binary dump");
        r.install().run();
        return r.indexes();
    }

    /**
     * Reads and stages a whole stream (a peer's {@code /dump} or a snapshot file); throws, having installed nothing,
     * when it is not complete and intact. The staged trees go live only when the result's {@code install} runs.
     */
    static Recovered stage(InputStream body, Indexers indexers, long timeoutMillis, String source)
            throws IOException, InterruptedException {
        BinaryDumpApplier applier = new BinaryDumpApplier(indexers);
        BinaryDumpReader.read(body, applier);
        try {
            indexers.flushAll().get(timeoutMillis, TimeUnit.MILLISECONDS); // every staged op applied
        } catch (ExecutionException | TimeoutException e) {
            throw new IOException("staging the dump did not finish: " + e, e);
        }
        List<ModelIndex> staged = List.copyOf(applier.staged);
        return new Recovered(source, staged.size(), applier.registrations, () -> {
            for (ModelIndex s : staged) {
                install(indexers, s);
            }
        });
    }

    private static void install(Indexers indexers, ModelIndex staged) {
        ModelIndex live =
                DumpApplier.liveIndex(indexers, staged.modelName(), staged.tenantId(), staged.blockSize(), LOG);
        if (live != null) {
            live.adopt(staged);
        }
    }

    @Override
    public void index(String modelName, String tenantId, int blockSize) {
        section = indexers.detached(modelName, tenantId, blockSize);
        staged.add(section);
        workers.clear();
        chains.clear();
    }

    @Override
    public void worker(int ref, long instanceId, int dpRank) {
        workers.add(new WorkerKey(instanceId, dpRank));
        chains.add(new Chain());
    }

    @Override
    public void block(boolean hasParent, long parentBlockHash, long blockHash, long localHash) {
        this.hasParent = hasParent;
        this.parentBlockHash = parentBlockHash;
        this.blockHash = blockHash;
        this.localHash = localHash;
    }

    @Override
    public void owner(int workerRef, StorageTier tier) {
        chains.get(workerRef).add(tier, hasParent, parentBlockHash, blockHash, localHash);
    }

    @Override
    public void frameEnd() {
        for (int ref = 0; ref < chains.size(); ref++) {
            List<IndexOp> ops = chains.get(ref).drain();
            if (ops != null) {
                section.stageOps(workers.get(ref), ops);
            }
        }
    }

    @Override
    public void registration(SavedRegistration registration) {
        registrations.add(registration);
    }

    @Override
    public void indexEnd() {
        section = null;
    }

    @Override
    public void end() {}

    /** One worker's chain being extended, and the ops cut from it since the last frame. */
    private static final class Chain {
        private final LongArrayList blocks = new LongArrayList();
        private final LongArrayList locals = new LongArrayList();
        private StorageTier tier;
        private boolean hasParent;
        private long parent;
        private List<IndexOp> ops;

        void add(StorageTier tier, boolean hasParent, long parent, long blockHash, long localHash) {
            boolean extends_ =
                    !blocks.isEmpty() && tier == this.tier && hasParent && parent == blocks.getLong(blocks.size() - 1);
            if (!extends_) {
                cut();
                this.tier = tier;
                this.hasParent = hasParent;
                this.parent = parent;
            }
            blocks.add(blockHash);
            locals.add(localHash);
        }

        private void cut() {
            if (blocks.isEmpty()) {
                return;
            }
            if (ops == null) {
                ops = new ArrayList<>();
            }
            ops.add(IndexOp.Store.recovered(tier, hasParent, parent, blocks.toLongArray(), locals.toLongArray()));
            blocks.clear();
            locals.clear();
        }

        /** The ops so far (the open chain included), or null when there are none. */
        List<IndexOp> drain() {
            cut();
            List<IndexOp> out = ops;
            ops = null;
            return out;
        }
    }
}

package io.kvindexer.indexer.recovery;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.dump.BinaryDump;
import io.kvindexer.indexer.dump.BinaryDumpReader;
import io.kvindexer.indexer.dump.SavedRegistration;
import io.kvindexer.indexer.index.DumpRecords;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.index.ModelIndex;
import io.kvindexer.indexer.index.StoreTimes;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * Applies a peer's binary {@code /dump} while it downloads, without ever exposing a partial one: each section is
 * staged into a detached index ({@link Indexers#detached}) on the writer threads as its checksummed frames arrive;
 * only after the END frame has verified the whole stream are the staged indexes installed
 * ({@link ModelIndex#adopt}). A truncated or corrupted dump is dropped with its staging, and the live indexes never
 * saw any of it.
 *
 * <p>Each verified frame's records go to the staged index as they are ({@link ModelIndex#stageRecords}): a block
 * record with all its owners, found or created once, in the dump's order. A version 3 stream's last-store times go
 * with their section to its install, where block expiry starts each recovered block's time from them.
 */
final class BinaryDumpApplier implements BinaryDumpReader.Visitor {

    private static final System.Logger LOG = System.getLogger(BinaryDumpApplier.class.getName());

    private final Indexers indexers;
    private final List<ModelIndex> staged = new ArrayList<>();
    /** each staged section's last-store times (none before version 3), in the order of {@link #staged} */
    private final List<StoreTimes> times = new ArrayList<>();

    private final List<SavedRegistration> registrations = new ArrayList<>();
    private ModelIndex section;
    private final List<WorkerKey> workers = new ArrayList<>();
    /** the section's workers as the records of the next frame name them (a new array once one is added) */
    private WorkerKey[] workerArray = new WorkerKey[0];

    /** the peer's block count of each section, in order ({@link BinaryDump#BLOCKS_HEADER}) */
    private final long[] blockCounts;

    private final DumpRecords.Builder records = new DumpRecords.Builder();

    private BinaryDumpApplier(Indexers indexers, long[] blockCounts) {
        this.indexers = indexers;
        this.blockCounts = blockCounts;
    }

    /** The header's counts; none (an empty array) when it is missing or malformed: it is only a hint. */
    private static long[] blockCounts(String header) {
        if (header.isEmpty()) {
            return new long[0];
        }
        String[] parts = header.split(",", -1);
        long[] counts = new long[parts.length];
        try {
            for (int i = 0; i < parts.length; i++) {
                counts[i] = Long.parseLong(parts[i].strip());
            }
        } catch (NumberFormatException e) {
            return new long[0];
        }
        return counts;
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
        return stage(body, indexers, timeoutMillis, source, "");
    }

    /** {@link #stage} with a peer's {@link BinaryDump#BLOCKS_HEADER} ({@code ""}: none). */
    static Recovered stage(InputStream body, Indexers indexers, long timeoutMillis, String source, String blockCounts)
            throws IOException, InterruptedException {
        BinaryDumpApplier applier = new BinaryDumpApplier(indexers, blockCounts(blockCounts));
        BinaryDumpReader.read(body, applier);
        DumpApplier.awaitStaging(indexers, timeoutMillis);
        List<ModelIndex> staged = List.copyOf(applier.staged);
        List<StoreTimes> times = List.copyOf(applier.times);
        return new Recovered(source, staged.size(), applier.registrations, () -> {
            for (int i = 0; i < staged.size(); i++) {
                ModelIndex s = staged.get(i);
                DumpApplier.install(indexers, s.modelName(), s.tenantId(), s.blockSize(), s, times.get(i), LOG);
            }
        });
    }

    @Override
    public void index(String modelName, String tenantId, int blockSize) {
        section = indexers.detached(modelName, tenantId, blockSize);
        if (staged.size() < blockCounts.length) {
            section.expectBlocks(blockCounts[staged.size()]);
        }
        staged.add(section);
        times.add(new StoreTimes());
        workers.clear();
        workerArray = new WorkerKey[0];
    }

    @Override
    public void worker(int ref, long instanceId, int dpRank) {
        workers.add(new WorkerKey(instanceId, dpRank));
    }

    @Override
    public void block(boolean hasParent, long parentBlockHash, long blockHash, long localHash) {
        records.block(hasParent, parentBlockHash, blockHash, localHash);
    }

    @Override
    public void owner(int workerRef, StorageTier tier) {
        records.owner(workerRef, tier);
    }

    @Override
    public void storeTimes(long instanceId, int dpRank, StorageTier tier, long[] blockHashes, long[] epochMillis) {
        times.getLast().times(new WorkerKey(instanceId, dpRank), tier, blockHashes, epochMillis);
    }

    @Override
    public void cacheSalts(long instanceId, int dpRank, String salt, long[] blockHashes) {
        section.restoreCacheSalts(new WorkerKey(instanceId, dpRank), salt, blockHashes);
    }

    @Override
    public void frameEnd() {
        if (records.isEmpty()) {
            return;
        }
        if (workerArray.length != workers.size()) {
            workerArray = workers.toArray(new WorkerKey[0]);
        }
        section.stageRecords(records.build(workerArray));
    }

    @Override
    public void registration(SavedRegistration registration) {
        registrations.add(registration);
    }

    @Override
    public void indexEnd() {
        section.finishStaging();
        section = null;
    }
}

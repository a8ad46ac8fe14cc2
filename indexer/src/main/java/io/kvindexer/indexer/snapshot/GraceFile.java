package io.kvindexer.indexer.snapshot;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.dump.BinaryDump;
import io.kvindexer.indexer.dump.BinaryDumpReader;
import io.kvindexer.indexer.dump.BinaryDumpWriter;
import io.kvindexer.indexer.dump.SavedRegistration;
import io.kvindexer.indexer.index.IndexOp;
import io.kvindexer.indexer.index.SaltedBlocks;
import io.kvindexer.indexer.index.StoreTimes;
import io.kvindexer.indexer.registry.DetachedWorker;
import it.unimi.dsi.fastutil.longs.Long2LongMap;
import it.unimi.dsi.fastutil.longs.Long2LongOpenHashMap;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * The file beside a snapshot that carries the workers {@code --unregister-grace} keeps detached
 * ({@code snapshot-<n>.grace} beside {@code snapshot-<n>.kvix}), so that a restart within the grace period keeps
 * their blocks and the end of their period. A file of its own, not a part of the snapshot: a version that does not
 * know it reads the snapshot as before (a rollback loses the detached blocks, nothing else), and a damaged one costs
 * the detached blocks, never the snapshot.
 *
 * <pre>
 * file     := magic "KVIXGRCE" | version u16 (= 1) | count u32 | deadline[count] | crc32c u32 over all before it
 *             | a binary dump stream (version 2; 3 when some block has a last-store time; 4 when some worker's
 *               watermark batch is known; 5 when some worker has salted blocks, {@code --mix-cache-salt})
 * deadline := instanceId u64 | dpRank u32 | expiresAt u64        the end of the worker's grace period, epoch ms
 * </pre>
 * The dump's registrations are the detached workers (endpoint, (model, tenant), block size, seq watermark and the
 * batch at it: a comeback after a restart shows an engine restart by that batch, as a snapshot's registration does); its
 * sections hold one worker each, its memberships in dump order, their last-store times and its blocks' cache salts.
 */
public final class GraceFile {

    private static final byte[] MAGIC = "KVIXGRCE".getBytes(StandardCharsets.US_ASCII);
    private static final int VERSION = 1;
    /** a count beyond this is a corrupted header, not a fleet */
    private static final int MAX_WORKERS = 1 << 20;

    private GraceFile() {}

    /** Writes {@code workers} (at least one) to {@code out}, which is not closed. */
    static void write(List<DetachedWorker> workers, OutputStream out) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        DataOutputStream d = new DataOutputStream(head);
        d.write(MAGIC);
        d.writeShort(VERSION);
        d.writeInt(workers.size());
        for (DetachedWorker w : workers) {
            d.writeLong(w.registration().instanceId());
            d.writeInt(w.registration().dpRank());
            d.writeLong(w.expiresAtMillis());
        }
        CRC32C crc = new CRC32C();
        crc.update(head.toByteArray());
        d.writeInt((int) crc.getValue());
        out.write(head.toByteArray());

        boolean times = workers.stream().anyMatch(w -> !w.times().isEmpty());
        boolean batches = workers.stream().anyMatch(w -> w.registration().watermarkBatch() != null);
        boolean salts = workers.stream().anyMatch(w -> !w.salts().isEmpty());
        BinaryDumpWriter dump = new BinaryDumpWriter(
                out, workers.stream().map(DetachedWorker::registration).toList(), times, batches, salts);
        for (DetachedWorker w : workers) {
            SavedRegistration r = w.registration();
            WorkerKey key = new WorkerKey(r.instanceId(), r.dpRank());
            dump.beginIndex(r.modelName(), r.tenantId(), r.blockSize());
            for (IndexOp op : w.ops()) {
                if (op instanceof IndexOp.Store s) {
                    long[] hashes = s.blockHashes();
                    for (int i = 0; i < hashes.length; i++) {
                        dump.membership(
                                key,
                                s.tier(),
                                i > 0 || s.hasParent(),
                                i > 0 ? hashes[i - 1] : s.parentBlockHash(),
                                hashes[i],
                                s.localHashes()[i]);
                    }
                }
            }
            if (times) {
                for (StorageTier tier : StorageTier.values()) {
                    Long2LongOpenHashMap m = w.times().of(key, tier);
                    if (m != null && !m.isEmpty()) {
                        long[][] t = sorted(m);
                        dump.storeTimes(key, tier, t[0], t[1]);
                    }
                }
            }
            for (SaltedBlocks s : w.salts()) {
                dump.cacheSalts(key, s.salt(), s.blockHashes());
            }
            dump.endIndex();
        }
        dump.close();
    }

    /** {@code m}'s hashes and times, oldest first (the steps between them stay small). */
    private static long[][] sorted(Long2LongOpenHashMap m) {
        Long2LongMap.Entry[] entries = m.long2LongEntrySet().toArray(new Long2LongMap.Entry[0]);
        Arrays.sort(entries, (a, b) -> Long.compare(a.getLongValue(), b.getLongValue()));
        long[] hashes = new long[entries.length];
        long[] millis = new long[entries.length];
        for (int i = 0; i < entries.length; i++) {
            hashes[i] = entries[i].getLongKey();
            millis[i] = entries[i].getLongValue();
        }
        return new long[][] {hashes, millis};
    }

    /** Reads a whole file; throws, having kept nothing, when it is not complete and intact. */
    public static List<DetachedWorker> read(InputStream in) throws IOException {
        DataInputStream d = new DataInputStream(in);
        Map<WorkerKey, Long> deadlines = new HashMap<>();
        try {
            byte[] magic = d.readNBytes(MAGIC.length);
            if (!Arrays.equals(magic, MAGIC)) {
                throw new BinaryDump.FormatException("not a kv-indexer grace file (bad magic)");
            }
            int version = d.readUnsignedShort();
            if (version != VERSION) {
                throw new BinaryDump.FormatException(
                        "unsupported grace file version " + version + " (this reader speaks " + VERSION + ")");
            }
            int count = d.readInt();
            if (count < 0 || count > MAX_WORKERS) {
                throw new BinaryDump.FormatException(
                        "grace file header: " + Integer.toUnsignedString(count) + " workers");
            }
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            DataOutputStream echo = new DataOutputStream(head);
            echo.write(MAGIC);
            echo.writeShort(version);
            echo.writeInt(count);
            for (int i = 0; i < count; i++) {
                long instanceId = d.readLong();
                int dpRank = d.readInt();
                long expiresAt = d.readLong();
                echo.writeLong(instanceId);
                echo.writeInt(dpRank);
                echo.writeLong(expiresAt);
                deadlines.put(new WorkerKey(instanceId, dpRank), expiresAt);
            }
            CRC32C crc = new CRC32C();
            crc.update(head.toByteArray());
            if (d.readInt() != (int) crc.getValue()) {
                throw new BinaryDump.FormatException("grace file header: checksum mismatch");
            }
        } catch (EOFException e) {
            throw new BinaryDump.FormatException("truncated: the grace file ends inside its header");
        }
        Content content = new Content();
        BinaryDumpReader.read(in, content);
        List<DetachedWorker> out = new ArrayList<>();
        for (SavedRegistration r : content.registrations) {
            WorkerKey key = new WorkerKey(r.instanceId(), r.dpRank());
            Long expiresAt = deadlines.get(key);
            if (expiresAt == null) {
                throw new BinaryDump.FormatException("grace file: no deadline for " + key);
            }
            out.add(new DetachedWorker(
                    r,
                    expiresAt,
                    content.ops.getOrDefault(key, List.of()),
                    content.times,
                    content.salts.getOrDefault(key, List.of())));
        }
        return out;
    }

    /**
     * What the dump part holds: the registrations, each worker's memberships as recovered stores, their times, its
     * salted blocks.
     */
    private static final class Content implements BinaryDumpReader.Visitor {
        final List<SavedRegistration> registrations = new ArrayList<>();
        final Map<WorkerKey, List<IndexOp>> ops = new HashMap<>();
        final StoreTimes times = new StoreTimes();
        final Map<WorkerKey, List<SaltedBlocks>> salts = new HashMap<>();
        private final List<WorkerKey> workers = new ArrayList<>();
        private boolean hasParent;
        private long parent;
        private long block;
        private long local;

        @Override
        public void index(String modelName, String tenantId, int blockSize) {
            workers.clear();
        }

        @Override
        public void worker(int ref, long instanceId, int dpRank) {
            workers.add(new WorkerKey(instanceId, dpRank));
        }

        @Override
        public void block(boolean hasParent, long parentBlockHash, long blockHash, long localHash) {
            this.hasParent = hasParent;
            this.parent = parentBlockHash;
            this.block = blockHash;
            this.local = localHash;
        }

        @Override
        public void owner(int workerRef, StorageTier tier) {
            ops.computeIfAbsent(workers.get(workerRef), w -> new ArrayList<>())
                    .add(IndexOp.Store.recovered(tier, hasParent, parent, new long[] {block}, new long[] {local}));
        }

        @Override
        public void storeTimes(long instanceId, int dpRank, StorageTier tier, long[] blockHashes, long[] epochMillis) {
            times.times(new WorkerKey(instanceId, dpRank), tier, blockHashes, epochMillis);
        }

        @Override
        public void cacheSalts(long instanceId, int dpRank, String salt, long[] blockHashes) {
            salts.computeIfAbsent(new WorkerKey(instanceId, dpRank), w -> new ArrayList<>())
                    .add(new SaltedBlocks(salt, blockHashes));
        }

        @Override
        public void registration(SavedRegistration registration) {
            registrations.add(registration);
        }
    }
}

package io.kvindexer.indexer.dump;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import it.unimi.dsi.fastutil.objects.Object2IntOpenHashMap;
import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Writes a {@link BinaryDump} stream: {@link #beginIndex}, one {@link #membership} per (worker, block, tier) in
 * the index's dump order, {@link #endIndex}; {@link #close} writes END. Consecutive memberships of the same block
 * share one record. Not thread-safe; the target stream is flushed, never closed.
 */
public final class BinaryDumpWriter implements Closeable {

    private final OutputStream out;
    private final int version;
    private final CRC32C crc = new CRC32C();
    private byte[] buf = new byte[BinaryDump.TARGET_FRAME_BYTES + 4096];
    private int len;

    private final Object2IntOpenHashMap<WorkerKey> workerRefs = new Object2IntOpenHashMap<>();
    /**
     * Workers seen in this section and their refs, by identity (an index hands out one key object per worker and
     * shard): a direct-mapped cache in front of {@link #workerRefs}, whose lookup hashes and compares the record's
     * fields, which was a quarter of the source's encoding time.
     */
    private final WorkerKey[] seenWorkers = new WorkerKey[SEEN];

    private final int[] seenRefs = new int[SEEN];
    private static final int SEEN = 256;
    private boolean inIndex;
    private int indexes;
    private long totalMemberships;
    private long sectionRecords;
    private long sectionMemberships;
    /** registrations written (version 2), -1 for version 1; and those in the frame being built */
    private int registrations;

    private int frameRegistrations;
    /** version 3 on: sections may carry STORE_TIMES frames */
    private boolean storeTimes;
    /** version 4 on: each registration carries the batch at its watermark */
    private boolean watermarkBatches;
    /** store times written (version 3) */
    private long storeTimeCount;
    /** version 5 on with --mix-cache-salt: sections carry CACHE_SALTS frames */
    private boolean cacheSalts;
    /** version 6: each registration says whether its watermark is a snapshot's not proven since */
    private boolean snapshotWatermarks;
    /** salted block hashes written (version 5) */
    private long saltCount;

    // the record being built: its owners are appended as memberships arrive
    private boolean open;
    private long recordBlockHash;
    private int ownerCountAt;
    private int owners;
    private boolean prevInFrame;
    private long prevBlockHash;

    /** Version 1: trees only. */
    public BinaryDumpWriter(OutputStream out) throws IOException {
        this(out, BinaryDump.VERSION);
        registrations = -1;
    }

    /** Version 2: {@code saved} go out first, then the trees that {@link #beginIndex} adds. */
    public BinaryDumpWriter(OutputStream out, List<SavedRegistration> saved) throws IOException {
        this(out, saved, false);
    }

    /**
     * Version 3 with {@code storeTimes} (each section may carry {@link #storeTimes}), else version 2: {@code saved}
     * go out first, then the trees that {@link #beginIndex} adds.
     */
    public BinaryDumpWriter(OutputStream out, List<SavedRegistration> saved, boolean storeTimes) throws IOException {
        this(out, saved, storeTimes, false);
    }

    /**
     * Version 4 with {@code watermarkBatches} (each registration with the batch at its watermark; sections carry
     * {@link #storeTimes} when {@code storeTimes}), else as {@link #BinaryDumpWriter(OutputStream, List, boolean)}.
     */
    public BinaryDumpWriter(
            OutputStream out, List<SavedRegistration> saved, boolean storeTimes, boolean watermarkBatches)
            throws IOException {
        this(out, saved, storeTimes, watermarkBatches, false);
    }

    /**
     * Version 5 with {@code cacheSalts} (version 4 whose sections may carry {@link #cacheSalts} as well), else as
     * {@link #BinaryDumpWriter(OutputStream, List, boolean, boolean)}.
     */
    public BinaryDumpWriter(
            OutputStream out,
            List<SavedRegistration> saved,
            boolean storeTimes,
            boolean watermarkBatches,
            boolean cacheSalts)
            throws IOException {
        this(out, saved, storeTimes, watermarkBatches, cacheSalts, false);
    }

    /**
     * Version 6 with {@code snapshotWatermarks} (version 5, its sections with {@link #cacheSalts} only when {@code
     * cacheSalts}, each registration with its {@link SavedRegistration#fromSnapshot} mark): only for a reader that
     * asked for it, as an older one refuses the version. Else as {@link #BinaryDumpWriter(OutputStream, List,
     * boolean, boolean, boolean)}.
     */
    public BinaryDumpWriter(
            OutputStream out,
            List<SavedRegistration> saved,
            boolean storeTimes,
            boolean watermarkBatches,
            boolean cacheSalts,
            boolean snapshotWatermarks)
            throws IOException {
        this(
                out,
                snapshotWatermarks
                        ? BinaryDump.VERSION_WITH_SNAPSHOT_WATERMARKS
                        : cacheSalts
                                ? BinaryDump.VERSION_WITH_CACHE_SALTS
                                : watermarkBatches
                                        ? BinaryDump.VERSION_WITH_WATERMARK_BATCHES
                                        : storeTimes
                                                ? BinaryDump.VERSION_WITH_STORE_TIMES
                                                : BinaryDump.VERSION_WITH_REGISTRATIONS);
        this.storeTimes = storeTimes;
        this.watermarkBatches = version >= BinaryDump.VERSION_WITH_WATERMARK_BATCHES;
        this.cacheSalts = cacheSalts;
        this.snapshotWatermarks = snapshotWatermarks;
        for (SavedRegistration r : saved) {
            registration(r);
            if (len >= BinaryDump.TARGET_FRAME_BYTES) {
                registrationsFrame();
            }
        }
        if (len > 0) {
            registrationsFrame();
        }
    }

    private BinaryDumpWriter(OutputStream out, int version) throws IOException {
        this.out = out;
        this.version = version;
        workerRefs.defaultReturnValue(-1);
        byte[] header = Arrays.copyOf(BinaryDump.MAGIC, BinaryDump.HEADER_BYTES);
        header[8] = (byte) (version >>> 8);
        header[9] = (byte) version;
        out.write(header);
    }

    private void registration(SavedRegistration r) {
        u64(r.instanceId());
        varint(Integer.toUnsignedLong(r.dpRank()));
        string(r.endpoint());
        optional(r.replayEndpoint());
        optional(r.podName());
        string(r.modelName());
        string(r.tenantId());
        u32(r.blockSize());
        u64(r.watermark());
        if (watermarkBatches) {
            SavedRegistration.WatermarkBatch batch = r.watermarkBatch();
            ensure(1);
            if (batch == null) {
                buf[len++] = 0;
            } else {
                buf[len++] = 1;
                u64(batch.digest());
                u64(Double.doubleToRawLongBits(batch.timestamp()));
            }
        }
        if (snapshotWatermarks) {
            ensure(1);
            buf[len++] = (byte) (r.fromSnapshot() ? 1 : 0);
        }
        frameRegistrations++;
        registrations++;
    }

    /** A REGISTRATIONS frame of the entries buffered so far: their count goes in front. */
    private void registrationsFrame() throws IOException {
        byte[] entries = Arrays.copyOf(buf, len);
        len = 0;
        varint(frameRegistrations);
        ensure(entries.length);
        System.arraycopy(entries, 0, buf, len, entries.length);
        len += entries.length;
        frameRegistrations = 0;
        frame(BinaryDump.KIND_REGISTRATIONS);
    }

    private void optional(String s) {
        ensure(1);
        if (s == null) {
            buf[len++] = 0;
        } else {
            buf[len++] = 1;
            string(s);
        }
    }

    public void beginIndex(String modelName, String tenantId, int blockSize) throws IOException {
        if (inIndex) {
            throw new IllegalStateException("endIndex() first");
        }
        inIndex = true;
        workerRefs.clear();
        Arrays.fill(seenWorkers, null);
        sectionRecords = 0;
        sectionMemberships = 0;
        string(modelName);
        string(tenantId);
        u32(blockSize);
        frame(BinaryDump.KIND_INDEX);
    }

    /**
     * One membership; {@code parentBlockHash} is ignored without a parent. Fits {@code index.DumpSink}, hence
     * unchecked: an I/O failure of the target comes out as {@link UncheckedIOException}.
     */
    public void membership(
            WorkerKey worker,
            StorageTier tier,
            boolean hasParent,
            long parentBlockHash,
            long blockHash,
            long localHash) {
        if (!inIndex) {
            throw new IllegalStateException("beginIndex() first");
        }
        // the block test first: !open holds only for a section's first membership, which the JIT would compile out
        // and trap on in every dump; a new block nearly always differs from the last section's last one anyway
        if (blockHash != recordBlockHash || !open) {
            closeRecord();
            if (len >= BinaryDump.TARGET_FRAME_BYTES) {
                try {
                    frame(BinaryDump.KIND_BLOCKS);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
            boolean fromPrevious = hasParent && prevInFrame && parentBlockHash == prevBlockHash;
            ensure(1 + 8 + 8 + 8 + 5);
            buf[len++] = (byte) ((hasParent ? BinaryDump.FLAG_HAS_PARENT : 0)
                    | (fromPrevious ? BinaryDump.FLAG_PARENT_IS_PREVIOUS : 0));
            u64(blockHash);
            u64(localHash);
            if (hasParent && !fromPrevious) {
                u64(parentBlockHash);
            }
            open = true;
            recordBlockHash = blockHash;
            ownerCountAt = len;
            len += 5; // room for the owner count, compacted in closeRecord
            owners = 0;
            sectionRecords++;
        }
        int seen = System.identityHashCode(worker) & (SEEN - 1);
        int ref = seenWorkers[seen] == worker ? seenRefs[seen] : workerRefs.getInt(worker);
        ensure(5 + 8 + 5);
        if (ref < 0) {
            ref = workerRefs.size();
            workerRefs.put(worker, ref);
            varint(((long) ref << 2) | tier.ordinal());
            u64(worker.instanceId());
            varint(Integer.toUnsignedLong(worker.dpRank()));
        } else {
            varint(((long) ref << 2) | tier.ordinal());
        }
        seenWorkers[seen] = worker;
        seenRefs[seen] = ref;
        owners++;
        sectionMemberships++;
    }

    /**
     * The last-store times (epoch millis) of one worker's blocks on one tier, oldest first, in the current section
     * after its memberships; version 3 only. Fits {@code index.StoreTimes.Sink}, hence unchecked like
     * {@link #membership}.
     */
    public void storeTimes(WorkerKey worker, StorageTier tier, long[] blockHashes, long[] epochMillis) {
        if (!inIndex) {
            throw new IllegalStateException("beginIndex() first");
        }
        if (!storeTimes) {
            throw new IllegalStateException("store times need a writer made with them");
        }
        try {
            closeRecord();
            if (len > 0) {
                frame(BinaryDump.KIND_BLOCKS);
            }
            int at = 0;
            while (at < blockHashes.length) {
                // a run of at most what fits a frame of the usual size (8 + up to 10 bytes an entry)
                int n = Math.min(blockHashes.length - at, BinaryDump.TARGET_FRAME_BYTES / 18);
                u64(worker.instanceId());
                varint(Integer.toUnsignedLong(worker.dpRank()));
                ensure(1);
                buf[len++] = (byte) tier.ordinal();
                varint(n);
                long previous = epochMillis[at];
                u64(previous);
                for (int i = at; i < at + n; i++) {
                    u64(blockHashes[i]);
                    long step = epochMillis[i] - previous;
                    varint((step << 1) ^ (step >> 63));
                    previous = epochMillis[i];
                }
                frame(BinaryDump.KIND_STORE_TIMES);
                at += n;
                storeTimeCount += n;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The engine hashes of one worker's blocks stored with {@code salt} ({@code --mix-cache-salt}), in the current
     * section after its memberships; version 5 only. A worker none of the section's memberships named is left out
     * (one being unregistered, whose blocks stayed out too). Fits {@code index.CacheSalts.Sink}, hence unchecked like
     * {@link #membership}.
     */
    public void cacheSalts(WorkerKey worker, String salt, long[] blockHashes) {
        if (!inIndex) {
            throw new IllegalStateException("beginIndex() first");
        }
        if (!cacheSalts) {
            throw new IllegalStateException("cache salts need a writer made with them");
        }
        if (workerRefs.getInt(worker) < 0) {
            return;
        }
        try {
            closeRecord();
            if (len > 0) {
                frame(BinaryDump.KIND_BLOCKS);
            }
            for (int at = 0; at < blockHashes.length; ) {
                int n = Math.min(blockHashes.length - at, BinaryDump.TARGET_FRAME_BYTES / 8);
                u64(worker.instanceId());
                varint(Integer.toUnsignedLong(worker.dpRank()));
                string(salt);
                varint(n);
                for (int i = at; i < at + n; i++) {
                    u64(blockHashes[i]);
                }
                frame(BinaryDump.KIND_CACHE_SALTS);
                at += n;
                saltCount += n;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public void endIndex() throws IOException {
        closeRecord();
        if (len > 0) {
            frame(BinaryDump.KIND_BLOCKS);
        }
        u64(sectionRecords);
        u64(sectionMemberships);
        frame(BinaryDump.KIND_INDEX_END);
        inIndex = false;
        indexes++;
        totalMemberships += sectionMemberships;
    }

    /**
     * Forgets the section begun last so that an {@link #error} can follow; whatever of it already reached the
     * target is moot, because a reader refuses the whole stream at the ERROR frame.
     */
    public void abandonIndex() {
        inIndex = false;
        open = false;
        len = 0;
        prevInFrame = false;
    }

    /** An index whose dump failed; a reader rejects the whole stream with this message. */
    public void error(String modelName, String tenantId, String message) throws IOException {
        if (inIndex) {
            throw new IllegalStateException("endIndex() first");
        }
        string(modelName);
        string(tenantId);
        string(message);
        frame(BinaryDump.KIND_ERROR);
    }

    @Override
    public void close() throws IOException {
        if (inIndex) {
            throw new IllegalStateException("endIndex() first");
        }
        u32(indexes);
        u64(totalMemberships);
        if (registrations >= 0) {
            u32(registrations);
        }
        if (version >= BinaryDump.VERSION_WITH_STORE_TIMES) { // (0 when this writer had no store times)
            u64(storeTimeCount);
        }
        if (version >= BinaryDump.VERSION_WITH_CACHE_SALTS) { // (0 when this writer had no salts)
            u64(saltCount);
        }
        frame(BinaryDump.KIND_END);
        out.flush();
    }

    private void closeRecord() {
        if (!open) {
            return;
        }
        // the count was given 5 bytes; shift the owners left over the unused ones
        int countBytes = varintSize(owners);
        int ownersStart = ownerCountAt + 5;
        System.arraycopy(buf, ownersStart, buf, ownerCountAt + countBytes, len - ownersStart);
        len -= 5 - countBytes;
        int end = len;
        len = ownerCountAt;
        varint(owners);
        len = end;
        open = false;
        prevInFrame = true;
        prevBlockHash = recordBlockHash;
    }

    private void frame(int kind) throws IOException {
        byte[] head = {(byte) kind, (byte) (len >>> 24), (byte) (len >>> 16), (byte) (len >>> 8), (byte) len};
        crc.reset();
        crc.update(head);
        crc.update(buf, 0, len);
        int sum = (int) crc.getValue();
        out.write(head);
        out.write(buf, 0, len);
        out.write(new byte[] {(byte) (sum >>> 24), (byte) (sum >>> 16), (byte) (sum >>> 8), (byte) sum});
        len = 0;
        prevInFrame = false;
    }

    private void ensure(int more) {
        if (len + more > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + more));
        }
    }

    private void string(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        ensure(5 + b.length);
        varint(b.length);
        System.arraycopy(b, 0, buf, len, b.length);
        len += b.length;
    }

    private void u32(int v) {
        ensure(4);
        buf[len++] = (byte) (v >>> 24);
        buf[len++] = (byte) (v >>> 16);
        buf[len++] = (byte) (v >>> 8);
        buf[len++] = (byte) v;
    }

    private void u64(long v) {
        ensure(8);
        for (int shift = 56; shift >= 0; shift -= 8) {
            buf[len++] = (byte) (v >>> shift);
        }
    }

    private void varint(long v) {
        ensure(10);
        while ((v & ~0x7FL) != 0) {
            buf[len++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        buf[len++] = (byte) v;
    }

    private static int varintSize(long v) {
        int n = 1;
        while ((v & ~0x7FL) != 0) {
            v >>>= 7;
            n++;
        }
        return n;
    }
}

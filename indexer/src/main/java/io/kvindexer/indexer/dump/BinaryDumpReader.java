package io.kvindexer.indexer.dump;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.dump.BinaryDump.FormatException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * Reads a {@link BinaryDump} stream frame by frame. A frame's content reaches the {@link Visitor} only after its
 * checksum has matched, and {@link Visitor#end} only after the END frame closed a complete stream; a caller that
 * installs its work at {@code end} therefore never installs anything from a truncated or corrupted dump.
 */
public final class BinaryDumpReader {

    /**
     * Receives a dump's content; every call is for checksum-verified bytes. Each method does nothing unless
     * overridden, so a visitor takes only what it needs, and one that overrides none reads a stream through to check
     * it.
     */
    public interface Visitor {

        /** A section starts: the index of (model, tenant) with its block size; worker refs restart at 0. */
        default void index(String modelName, String tenantId, int blockSize) throws IOException {}

        /** The section's next worker (its ref is the number of workers announced before it). */
        default void worker(int ref, long instanceId, int dpRank) {}

        /** A block record; its owners follow as {@link #owner} calls. */
        default void block(boolean hasParent, long parentBlockHash, long blockHash, long localHash) {}

        default void owner(int workerRef, StorageTier tier) {}

        /** The end of one verified BLOCKS frame: a good moment to hand accumulated work on. */
        default void frameEnd() {}

        /** The section is complete (its counts matched). */
        default void indexEnd() throws IOException {}

        /**
         * The last-store times (epoch millis) of some of a worker's blocks on one tier, in the current section
         * (version 3 streams); the arrays are the receiver's to keep.
         */
        default void storeTimes(
                long instanceId, int dpRank, StorageTier tier, long[] blockHashes, long[] epochMillis) {}

        /**
         * The engine hashes of some of a worker's blocks stored with {@code salt}, in the current section (version
         * 5 streams); the array is the receiver's to keep.
         */
        default void cacheSalts(long instanceId, int dpRank, String salt, long[] blockHashes) {}

        /** A saved registration (version 2 on); each arrives once its frame verified. */
        default void registration(SavedRegistration registration) {}

        /** The stream is complete and consistent. */
        default void end() throws IOException {}
    }

    private static final StorageTier[] TIERS = StorageTier.values();

    private final InputStream in;
    private final Visitor visitor;
    private final CRC32C crc = new CRC32C();
    private byte[] frame = new byte[BinaryDump.TARGET_FRAME_BYTES * 2];
    private long offset;
    private int frameNumber;

    private BinaryDumpReader(InputStream in, Visitor visitor) {
        this.in = in;
        this.visitor = visitor;
    }

    /** Reads the whole stream into {@code visitor}; the stream is not closed. */
    public static void read(InputStream in, Visitor visitor) throws IOException {
        new BinaryDumpReader(in, visitor).run();
    }

    private void run() throws IOException {
        byte[] header = new byte[BinaryDump.HEADER_BYTES];
        int got = in.readNBytes(header, 0, header.length);
        offset = got;
        int magic = Math.min(got, BinaryDump.MAGIC.length);
        if (!Arrays.equals(header, 0, magic, BinaryDump.MAGIC, 0, magic)) {
            throw new FormatException("not a kv-indexer binary dump (bad magic)");
        }
        if (got < header.length) {
            throw new FormatException("truncated: the stream ends at byte " + got + ", inside the header");
        }
        int version = (header[8] & 0xFF) << 8 | header[9] & 0xFF;
        if (version > BinaryDump.VERSION_WITH_SNAPSHOT_WATERMARKS) {
            throw new BinaryDump.NewerVersionException("unsupported binary dump version " + version
                    + ", written by a newer kv-indexer (this reader speaks " + BinaryDump.VERSION + " to "
                    + BinaryDump.VERSION_WITH_SNAPSHOT_WATERMARKS + ")");
        }
        if (version < BinaryDump.VERSION) {
            throw new FormatException("unsupported binary dump version " + version + " (this reader speaks "
                    + BinaryDump.VERSION + " to " + BinaryDump.VERSION_WITH_SNAPSHOT_WATERMARKS + ")");
        }
        boolean withRegistrations = version >= BinaryDump.VERSION_WITH_REGISTRATIONS;
        boolean withStoreTimes = version >= BinaryDump.VERSION_WITH_STORE_TIMES;
        boolean withBatches = version >= BinaryDump.VERSION_WITH_WATERMARK_BATCHES;
        boolean withSalts = version >= BinaryDump.VERSION_WITH_CACHE_SALTS;
        boolean withMarks = version >= BinaryDump.VERSION_WITH_SNAPSHOT_WATERMARKS;
        int registrations = 0;
        if (header[10] != 0 || header[11] != 0) {
            throw new FormatException("unknown header flags");
        }
        boolean inIndex = false;
        int indexes = 0;
        long totalMemberships = 0;
        while (true) {
            ByteBuffer p = nextFrame();
            int kind = frame[0];
            String where = "frame " + frameNumber + " (at byte " + frameStart + ")";
            switch (kind) {
                case BinaryDump.KIND_INDEX -> {
                    require(!inIndex, where + ": INDEX inside a section");
                    String model = string(p, where);
                    String tenant = string(p, where);
                    int blockSize = u32(p, where);
                    require(blockSize > 0, where + ": block size " + Integer.toUnsignedString(blockSize));
                    done(p, where);
                    inIndex = true;
                    workers = 0;
                    records = 0;
                    memberships = 0;
                    visitor.index(model, tenant, blockSize);
                }
                case BinaryDump.KIND_BLOCKS -> {
                    require(inIndex, where + ": BLOCKS outside a section");
                    blocks(p, where);
                    visitor.frameEnd();
                }
                case BinaryDump.KIND_STORE_TIMES -> {
                    require(withStoreTimes, where + ": STORE_TIMES before version 3");
                    require(inIndex, where + ": STORE_TIMES outside a section");
                    storeTimes(p, where);
                }
                case BinaryDump.KIND_CACHE_SALTS -> {
                    require(withSalts, where + ": CACHE_SALTS before version 5");
                    require(inIndex, where + ": CACHE_SALTS outside a section");
                    cacheSalts(p, where);
                }
                case BinaryDump.KIND_INDEX_END -> {
                    require(inIndex, where + ": INDEX_END outside a section");
                    long wantRecords = u64(p, where);
                    long wantMemberships = u64(p, where);
                    done(p, where);
                    requireTally(where, "section", wantRecords, records, "records", wantMemberships, memberships);
                    inIndex = false;
                    indexes++;
                    totalMemberships += memberships;
                    visitor.indexEnd();
                }
                case BinaryDump.KIND_ERROR -> {
                    String model = string(p, where);
                    String tenant = string(p, where);
                    String message = string(p, where);
                    throw new FormatException("the peer failed to dump " + model + ":" + tenant + ": " + message);
                }
                case BinaryDump.KIND_REGISTRATIONS -> {
                    require(withRegistrations, where + ": REGISTRATIONS in a version 1 stream");
                    require(!inIndex, where + ": REGISTRATIONS inside a section");
                    long count = varint(p, where);
                    for (long i = 0; i < count; i++) {
                        visitor.registration(registration(p, where, withBatches, withMarks));
                        registrations++;
                    }
                    done(p, where);
                }
                case BinaryDump.KIND_END -> {
                    require(!inIndex, where + ": END inside a section");
                    int wantIndexes = u32(p, where);
                    long wantMemberships = u64(p, where);
                    if (withRegistrations) {
                        announced(where, Integer.toUnsignedLong(u32(p, where)), registrations, "registrations");
                    }
                    if (withStoreTimes) {
                        announced(where, u64(p, where), storeTimeCount, "store times");
                    }
                    if (withSalts) {
                        announced(where, u64(p, where), saltCount, "salted blocks");
                    }
                    done(p, where);
                    requireTally(where, "stream", wantIndexes, indexes, "indexes", wantMemberships, totalMemberships);
                    if (in.read() != -1) {
                        throw new FormatException("unexpected bytes after the END frame (at byte " + offset + ")");
                    }
                    visitor.end();
                    return;
                }
                default -> throw new FormatException(where + ": unknown frame kind " + kind);
            }
        }
    }

    private long frameStart;
    /** salted block hashes read (version 5) */
    private long saltCount;
    /** the section's workers, records and memberships so far */
    private int workers;

    private long records;
    private long memberships;
    /** store times read so far (version 3) */
    private long storeTimeCount;

    /**
     * A BLOCKS frame's records. A method of its own, so that the JIT compiles this loop and {@link #record} alone: in
     * {@link #run} the loop made the compiler take the whole frame switch (100-300 ms of compiler time per
     * recompilation, on a replica's 2 cores while it recovers).
     */
    private void blocks(ByteBuffer p, String where) throws FormatException {
        boolean havePrevious = false;
        long previous = 0;
        while (p.hasRemaining()) {
            previous = record(p, where, havePrevious, previous);
            havePrevious = true;
        }
    }

    /**
     * One block record and its owners, handed to the visitor; returns its block hash. A method per record, so that a
     * cold reader (a restarted replica) gets it compiled after a few hundred records, not after the frame loop's
     * on-stack replacement.
     */
    private long record(ByteBuffer p, String where, boolean havePrevious, long previous) throws FormatException {
        int flags = p.get() & 0xFF;
        if ((flags & ~3) != 0) {
            throw new FormatException(where + ": unknown record flags " + flags);
        }
        boolean hasParent = (flags & BinaryDump.FLAG_HAS_PARENT) != 0;
        boolean fromPrevious = (flags & BinaryDump.FLAG_PARENT_IS_PREVIOUS) != 0;
        if (fromPrevious && !(hasParent && havePrevious)) {
            throw new FormatException(where + ": bad parent reference");
        }
        long blockHash = u64(p, where);
        long localHash = u64(p, where);
        long parent = fromPrevious ? previous : hasParent ? u64(p, where) : 0;
        long owners = varint(p, where);
        if (owners < 1 || owners > Integer.MAX_VALUE) {
            throw new FormatException(where + ": owner count " + owners);
        }
        visitor.block(hasParent, parent, blockHash, localHash);
        for (long o = 0; o < owners; o++) {
            long code = varint(p, where);
            long ref = code >>> 2;
            if (ref > workers) {
                throw new FormatException(where + ": unknown worker ref " + ref);
            }
            if (ref == workers) {
                worker(p, where);
            }
            visitor.owner((int) ref, TIERS[(int) (code & 3)]);
        }
        memberships += owners;
        records++;
        return blockHash;
    }

    /** One STORE_TIMES frame: a worker, a tier and its blocks' times, the steps between them zigzag-encoded. */
    private void storeTimes(ByteBuffer p, String where) throws FormatException {
        long instanceId = u64(p, where);
        long dpRank = varint(p, where);
        require(dpRank <= 0xFFFF_FFFFL, where + ": dp rank out of range");
        require(p.hasRemaining(), where + ": record runs past the frame");
        int tier = p.get() & 0xFF;
        require(tier < TIERS.length, where + ": unknown tier " + tier);
        long count = varint(p, where);
        // each entry takes at least 9 bytes: a corrupted count must not make the reader allocate gigabytes
        require(count <= p.remaining() / 9, where + ": " + count + " store times do not fit the frame");
        long previous = u64(p, where);
        long[] hashes = new long[(int) count];
        long[] millis = new long[(int) count];
        for (int i = 0; i < count; i++) {
            hashes[i] = u64(p, where);
            long zigzag = varint(p, where);
            previous += (zigzag >>> 1) ^ -(zigzag & 1);
            millis[i] = previous;
        }
        done(p, where);
        storeTimeCount += count;
        visitor.storeTimes(instanceId, (int) dpRank, TIERS[tier], hashes, millis);
    }

    /** One CACHE_SALTS frame: a worker, a salt and the engine hashes of its blocks stored with it. */
    private void cacheSalts(ByteBuffer p, String where) throws FormatException {
        long instanceId = u64(p, where);
        long dpRank = varint(p, where);
        require(dpRank <= 0xFFFF_FFFFL, where + ": dp rank out of range");
        String salt = string(p, where);
        long count = varint(p, where);
        // a corrupted count must not make the reader allocate gigabytes
        require(
                count == p.remaining() / 8 && p.remaining() % 8 == 0,
                where + ": " + count + " hashes do not fill the frame");
        long[] hashes = new long[(int) count];
        for (int i = 0; i < count; i++) {
            hashes[i] = u64(p, where);
        }
        done(p, where);
        saltCount += count;
        visitor.cacheSalts(instanceId, (int) dpRank, salt, hashes);
    }

    /** A worker's first membership in the section carries its identity: it gets the next ref. */
    private void worker(ByteBuffer p, String where) throws FormatException {
        long instanceId = u64(p, where);
        long dpRank = varint(p, where);
        if (dpRank > 0xFFFF_FFFFL) {
            throw new FormatException(where + ": dp rank out of range");
        }
        visitor.worker(workers++, instanceId, (int) dpRank);
    }

    /** Reads and verifies the next frame into {@link #frame}; returns its payload. */
    private ByteBuffer nextFrame() throws IOException {
        frameNumber++;
        frameStart = offset;
        String what = "frame " + frameNumber + " (at byte " + frameStart + ")";
        readFully(frame, 0, BinaryDump.FRAME_HEAD, what);
        int length = (frame[1] & 0xFF) << 24 | (frame[2] & 0xFF) << 16 | (frame[3] & 0xFF) << 8 | frame[4] & 0xFF;
        if (length < 0 || length > BinaryDump.MAX_FRAME_BYTES) {
            throw new FormatException(
                    what + ": length " + Integer.toUnsignedString(length) + " exceeds " + BinaryDump.MAX_FRAME_BYTES);
        }
        int total = BinaryDump.FRAME_HEAD + length + 4;
        if (frame.length < total) {
            frame = Arrays.copyOf(frame, Math.max(total, frame.length * 2));
        }
        readFully(frame, BinaryDump.FRAME_HEAD, length + 4, what);
        crc.reset();
        crc.update(frame, 0, BinaryDump.FRAME_HEAD + length);
        int end = BinaryDump.FRAME_HEAD + length;
        int stored = (frame[end] & 0xFF) << 24
                | (frame[end + 1] & 0xFF) << 16
                | (frame[end + 2] & 0xFF) << 8
                | frame[end + 3] & 0xFF;
        if (stored != (int) crc.getValue()) {
            throw new FormatException(what + ": checksum mismatch");
        }
        return ByteBuffer.wrap(frame, BinaryDump.FRAME_HEAD, length);
    }

    private void readFully(byte[] b, int off, int n, String what) throws IOException {
        int done = in.readNBytes(b, off, n);
        offset += done;
        if (done < n) {
            throw new FormatException("truncated: the stream ends at byte " + offset + ", inside " + what);
        }
    }

    /** The closing frame of a section or of the stream announces what came before it; both must agree. */
    private static void requireTally(
            String where, String scope, long wantCount, long count, String unit, long wantMemberships, long memberships)
            throws FormatException {
        require(
                wantCount == count && wantMemberships == memberships,
                where + ": the " + scope + " announces "
                        + wantCount + " " + unit + " / " + wantMemberships + " memberships, it held " + count + " / "
                        + memberships);
    }

    /** One of the END frame's totals against what the stream held. */
    private static void announced(String where, long want, long held, String what) throws FormatException {
        require(
                want == held,
                where + ": the stream announces " + Long.toUnsignedString(want) + " " + what + ", it held " + held);
    }

    private static void require(boolean ok, String message) throws FormatException {
        if (!ok) {
            throw new FormatException(message);
        }
    }

    private static void done(ByteBuffer p, String where) throws FormatException {
        require(!p.hasRemaining(), where + ": " + p.remaining() + " unexpected bytes");
    }

    private static int u32(ByteBuffer p, String where) throws FormatException {
        require(p.remaining() >= 4, where + ": record runs past the frame");
        return p.getInt();
    }

    private static long u64(ByteBuffer p, String where) throws FormatException {
        if (p.remaining() < 8) {
            throw pastTheFrame(where);
        }
        return p.getLong();
    }

    private static FormatException pastTheFrame(String where) {
        return new FormatException(where + ": record runs past the frame");
    }

    private static long varint(ByteBuffer p, String where) throws FormatException {
        long v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (!p.hasRemaining()) {
                throw pastTheFrame(where);
            }
            byte b = p.get();
            v |= (long) (b & 0x7F) << shift;
            if (b >= 0) {
                return v;
            }
        }
        throw new FormatException(where + ": varint too long");
    }

    private static SavedRegistration registration(ByteBuffer p, String where, boolean withBatch, boolean withMark)
            throws FormatException {
        long instanceId = u64(p, where);
        long dpRank = varint(p, where);
        require(dpRank <= 0xFFFF_FFFFL, where + ": dp rank out of range");
        String endpoint = string(p, where);
        String replay = optional(p, where);
        String pod = optional(p, where);
        String model = string(p, where);
        String tenant = string(p, where);
        int blockSize = u32(p, where);
        require(blockSize > 0, where + ": registration block size " + Integer.toUnsignedString(blockSize));
        long watermark = u64(p, where);
        SavedRegistration.WatermarkBatch batch = withBatch ? watermarkBatch(p, where) : null;
        boolean fromSnapshot = false; // before version 6: current, as the writer's listener took it
        if (withMark) {
            require(p.hasRemaining(), where + ": record runs past the frame");
            byte mark = p.get();
            require(mark == 0 || mark == 1, where + ": bad snapshot watermark mark " + mark);
            fromSnapshot = mark == 1;
        }
        return new SavedRegistration(
                instanceId,
                (int) dpRank,
                endpoint,
                replay,
                pod,
                model,
                tenant,
                blockSize,
                watermark,
                batch,
                fromSnapshot);
    }

    /** Version 4: the batch at a registration's watermark, or null when the writer did not know it. */
    private static SavedRegistration.WatermarkBatch watermarkBatch(ByteBuffer p, String where) throws FormatException {
        require(p.hasRemaining(), where + ": record runs past the frame");
        byte present = p.get();
        require(present == 0 || present == 1, where + ": bad optional marker " + present);
        if (present == 0) {
            return null;
        }
        long digest = u64(p, where);
        double timestamp = Double.longBitsToDouble(u64(p, where));
        return new SavedRegistration.WatermarkBatch(digest, timestamp);
    }

    private static String optional(ByteBuffer p, String where) throws FormatException {
        require(p.hasRemaining(), where + ": record runs past the frame");
        byte present = p.get();
        require(present == 0 || present == 1, where + ": bad optional marker " + present);
        return present == 1 ? string(p, where) : null;
    }

    private static String string(ByteBuffer p, String where) throws FormatException {
        long n = varint(p, where);
        require(n <= p.remaining(), where + ": string runs past the frame");
        ByteBuffer slice = p.slice(p.position(), (int) n);
        p.position(p.position() + (int) n);
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(slice)
                    .toString();
        } catch (CharacterCodingException e) {
            throw new FormatException(where + ": a name is not UTF-8");
        }
    }
}

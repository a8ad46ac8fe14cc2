package io.kvindexer.indexer.dump;

/**
 * The binary {@code /dump} ({@code Content-Type: application/x-kvindexer-dump}, asked for with that
 * {@code Accept}): what peer recovery prefers over Dynamo's JSON, about 20 bytes per membership instead of ~270,
 * and checksummed so that a truncated or corrupted transfer is detected before anything is installed.
 *
 * <p>Layout, versions 1 to 6 (fixed-width integers big-endian; "varint" is unsigned LEB128; strings are a varint
 * byte length then UTF-8):
 * <pre>
 * stream  := magic "KVIXDUMP" | version u16 (1 to 6) | flags u16 (= 0) | frame* ; the last frame is END
 * frame   := kind u8 | length u32 | payload[length] | crc32c u32 over kind, length and payload
 * INDEX     (1) model string | tenant string | blockSize u32         starts a section; its worker table is empty
 * BLOCKS    (2) record*                                               only inside a section
 * INDEX_END (3) records u64 | memberships u64                         closes the section; both counts must match
 * ERROR     (4) model string | tenant string | message string         an index the peer failed to dump
 * END       (5) indexes u32 | memberships u64 [| registrations u32] [| storeTimes u64] [| saltedBlocks u64]
 *            totals of the stream (registrations from version 2 on, store times from version 3 on, the block
 *            hashes of CACHE_SALTS frames from version 5 on); nothing may follow
 * REGISTRATIONS (6) count varint | registration*                      from version 2 on, outside sections
 * STORE_TIMES (7) instanceId u64 | dpRank varint | tier u8 | count varint | first u64 | (blockHash u64 | step
 *            zigzag varint)[count]                                    version 3 on, inside a section, after its
 *            BLOCKS: one worker's last-store times on one tier (epoch millis, the first entry's is {@code first},
 *            each next one the previous plus its step), oldest first; a long run takes several frames
 * CACHE_SALTS (8) instanceId u64 | dpRank varint | salt string | count varint | blockHash u64[count]
 *            version 5 on, inside a section, after its BLOCKS: engine hashes of one worker's blocks stored with that
 *            cache salt ({@code --mix-cache-salt}); a long run takes several frames
 * record  := flags u8 | blockHash u64 | localHash u64 | [parentBlockHash u64] | owners varint (≥ 1) | owner*
 *            flags bit 0: hasParent; bit 1: the parent is the previous record's block hash in this frame (the
 *            parent field is then omitted); other bits 0
 * owner   := varint (workerRef &lt;&lt; 2 | tier ordinal) [instanceId u64 | dpRank varint]
 *            a workerRef equal to the section's worker count introduces the next worker: its id and rank follow
 * registration := instanceId u64 | dpRank varint | endpoint string | replay opt | podName opt | model string
 *                 | tenant string | blockSize u32 | watermark u64 [| batch] [| fromSnapshot u8]
 *                 (opt := 0 | 1 string)
 * batch   := 0 | 1 digest u64 | timestamp f64                       version 4 on: the batch at the watermark (an
 *            XXH3-64 digest of its payload, the engine's timestamp in seconds as an IEEE 754 double), 0 when unknown
 * fromSnapshot := 0 | 1                                            version 6: 1 when the watermark is a snapshot's
 *            that no batch of the engine has proven since ({@link SavedRegistration#fromSnapshot})
 * </pre>
 * Version 2 adds the registrations and their seq watermarks ({@link SavedRegistration}): peer recovery asks for it
 * with {@code ?registrations=true} (snapshots were version 2 before version 3). Without that parameter a server writes
 * version 1, byte for byte what older replicas read, so a mixed-version rollout keeps recovering trees; a reader
 * accepts both versions (an older reader refuses version 2 by its header and falls back to JSON). Version 3 adds
 * the last-store times of the blocks on tiers with a {@code --block-ttl}, so that a recovered block's TTL runs
 * from its last store: peer recovery asks for it with {@code ?registrations=true&store_times=true} (a server that does
 * not know the parameter ignores it and answers version 2), snapshots were version 3 before version 4. A block without a time (a
 * version 1 or 2 stream, a tier without TTL on the writer) starts its time when it arrives. Version 4 adds to each
 * registration what its listener knew of the batch at its watermark (a digest of its bytes and its timestamp), so
 * that the first replay after a restore tells an engine that restarted meanwhile from one that did not (an engine
 * buffers the bytes it published: its batch at the watermark coming back with other bytes is another process):
 * peer recovery asks for it with {@code &watermark_batches=true} (a server that does not know the parameter ignores
 * it and answers version 3 or 2), snapshots are version 4. A registration without it (versions 2 and 3) is restored
 * with its watermark alone, as before. Version 5
 * adds, with {@code --mix-cache-salt}, the cache salt each worker's salted blocks were stored with, so that a block
 * stored after a restore under a salted parent is hashed with its parent's salt as before the restart: peer recovery
 * asks for it with {@code &cache_salts=true}; a writer without salts to write (no {@code --mix-cache-salt}) stays at
 * version 4, which a replica of the version before can still read. Version 6 is version 5 (its CACHE_SALTS frames
 * only with {@code --mix-cache-salt}) whose registrations each say whether their watermark is a snapshot's that no
 * batch has proven since: a replica restored from its snapshot whose listener without a replay endpoint still waits
 * for its engine's next batch passes that wait on, instead of its watermark as current. Peer recovery asks for it
 * with {@code &snapshot_watermarks=true} (a server that does not know the parameter ignores it and answers version 5
 * or lower, whose registrations a reader takes as current, as before); snapshots never are version 6 (a snapshot's
 * watermarks are all a snapshot's), so a rollback reads them.
 *
 * <p>Tier ordinals are those of {@link io.kvindexer.indexer.common.StorageTier} (device 0, host-pinned 1, disk 2,
 * external 3). Records come in the index's dump order (device tier first, a parent before its children).
 */
public final class BinaryDump {

    public static final String MEDIA_TYPE = "application/x-kvindexer-dump";
    /** Trees only: what a plain {@code Accept} gets, and all that older readers know. */
    public static final int VERSION = 1;
    /** Trees, registrations and watermarks. */
    public static final int VERSION_WITH_REGISTRATIONS = 2;
    /** Trees, registrations, watermarks and the last-store times of the blocks on tiers with a TTL. */
    public static final int VERSION_WITH_STORE_TIMES = 3;
    /** Version 3 and, with each registration, the batch at its watermark ({@link SavedRegistration#watermarkBatch}). */
    public static final int VERSION_WITH_WATERMARK_BATCHES = 4;
    /** Version 4 and the cache salts of salted blocks ({@code --mix-cache-salt}). */
    public static final int VERSION_WITH_CACHE_SALTS = 5;
    /** Version 5 and, with each registration, whether its watermark is a snapshot's not proven since. */
    public static final int VERSION_WITH_SNAPSHOT_WATERMARKS = 6;

    /**
     * A response header beside a binary {@code /dump} body (not part of the stream's format): the number of blocks of
     * each index, comma-separated, in the order of the stream's sections, as the peer counted them before its walk.
     * A replica sizes its staging tables from it instead of growing them; a hint only (a missing, malformed or
     * stale one costs time, never content).
     */
    public static final String BLOCKS_HEADER = "X-Kvindexer-Dump-Blocks";

    /**
     * A response header of {@code /dump} (either form), {@code true} when the replica is blank ({@code
     * docs/concepts.md}): it recovered nothing at its start, has stored no block, and nothing was unregistered since. A
     * recovering replica then prefers its own snapshot and keeps only the registrations the blank one learned.
     */
    public static final String BLANK_HEADER = "X-Kvindexer-Blank";

    static final byte[] MAGIC = {'K', 'V', 'I', 'X', 'D', 'U', 'M', 'P'};
    static final int HEADER_BYTES = MAGIC.length + 4;
    static final int KIND_INDEX = 1;
    static final int KIND_BLOCKS = 2;
    static final int KIND_INDEX_END = 3;
    static final int KIND_ERROR = 4;
    static final int KIND_END = 5;
    static final int KIND_REGISTRATIONS = 6;
    static final int KIND_STORE_TIMES = 7;
    static final int KIND_CACHE_SALTS = 8;
    /** frame header: kind u8 + length u32 */
    static final int FRAME_HEAD = 5;
    /** a writer closes a BLOCKS frame once its payload passes this */
    static final int TARGET_FRAME_BYTES = 64 * 1024;
    /** a reader refuses longer frames (a corrupted length must not make it allocate gigabytes) */
    static final int MAX_FRAME_BYTES = 16 * 1024 * 1024;

    static final int FLAG_HAS_PARENT = 1;
    static final int FLAG_PARENT_IS_PREVIOUS = 2;

    private BinaryDump() {}

    /** A binary dump that is not well-formed, truncated, or fails a checksum; the message says where. */
    public static class FormatException extends java.io.IOException {
        public FormatException(String message) {
            super(message);
        }
    }

    /**
     * A well-formed header of a version this build does not read: a newer kv-indexer wrote it (a rollback, or a peer
     * of a newer version). Not damage: such a snapshot is kept for the version that reads it.
     */
    public static final class NewerVersionException extends FormatException {
        public NewerVersionException(String message) {
            super(message);
        }
    }
}

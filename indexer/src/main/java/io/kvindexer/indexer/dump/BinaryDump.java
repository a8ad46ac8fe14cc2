package io.kvindexer.indexer.dump;

/**
 * The binary {@code /dump} ({@code Content-Type: application/x-kvindexer-dump}, asked for with that
 * {@code Accept}): what peer recovery prefers over Dynamo's JSON, about 20 bytes per membership instead of ~270,
 * and checksummed so that a truncated or corrupted transfer is detected before anything is installed.
 *
 * <p>Layout, version 1 (fixed-width integers big-endian; "varint" is unsigned LEB128; strings are a varint byte
 * length then UTF-8):
 * <pre>
 * stream  := magic "KVIXDUMP" | version u16 (= 1) | flags u16 (= 0) | frame* ; the last frame is END
 * frame   := kind u8 | length u32 | payload[length] | crc32c u32 over kind, length and payload
 * INDEX     (1) model string | tenant string | blockSize u32         starts a section; its worker table is empty
 * BLOCKS    (2) record*                                               only inside a section
 * INDEX_END (3) records u64 | memberships u64                         closes the section; both counts must match
 * ERROR     (4) model string | tenant string | message string         an index the peer failed to dump
 * END       (5) indexes u32 | memberships u64                         totals of the stream; nothing may follow
 * record  := flags u8 | blockHash u64 | localHash u64 | [parentBlockHash u64] | owners varint (≥ 1) | owner*
 *            flags bit 0: hasParent; bit 1: the parent is the previous record's block hash in this frame (the
 *            parent field is then omitted); other bits 0
 * owner   := varint (workerRef &lt;&lt; 2 | tier ordinal) [instanceId u64 | dpRank varint]
 *            a workerRef equal to the section's worker count introduces the next worker: its id and rank follow
 * </pre>
 * Tier ordinals are those of {@link io.kvindexer.indexer.common.StorageTier} (device 0, host-pinned 1, disk 2,
 * external 3). Records come in the index's dump order (device tier first, a parent before its children).
 */
public final class BinaryDump {

    public static final String MEDIA_TYPE = "application/x-kvindexer-dump";
    public static final int VERSION = 1;

    static final byte[] MAGIC = {'K', 'V', 'I', 'X', 'D', 'U', 'M', 'P'};
    static final int HEADER_BYTES = MAGIC.length + 4;
    static final int KIND_INDEX = 1;
    static final int KIND_BLOCKS = 2;
    static final int KIND_INDEX_END = 3;
    static final int KIND_ERROR = 4;
    static final int KIND_END = 5;
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
    public static final class FormatException extends java.io.IOException {
        public FormatException(String message) {
            super(message);
        }
    }
}

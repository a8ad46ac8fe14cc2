package io.kvindexer.indexer.sim;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.util.List;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePacker;

/**
 * Writes one engine batch {@code [ts, [events], dp_rank]} as msgpack, the way vLLM / SGLang do
 * (compatibility.md, Engine event streams): same key order and the same smallest-int forms, so golden payloads match byte for byte.
 */
public final class EngineEventEncoder {

    /** Which engine generation's shapes to write. */
    public enum Format {
        /** vLLM after PR #42892: tagged map events, keys in the order vLLM writes them (compatibility.md, Engine event streams). */
        MAP,
        /** vLLM v0.22/v0.23: positional events, 12-element BlockStored, 4-element BlockRemoved. */
        ARRAY12,
        /** vLLM v0.9.0: positional 6/2-element events and a 2-element envelope (no dp rank). */
        ARRAY6,
        /** SGLang positional: 7-element BlockStored ({@code medium} last), 3-element BlockRemoved. */
        SGLANG7
    }

    /** How block hashes go on the wire. */
    public enum HashMode {
        /** unsigned int, smallest form ({@code cf} above 2^32); vLLM's default. */
        U64,
        /** 32-byte {@code bin} whose last 8 bytes (big-endian) are the hash; vLLM with int hashes off. */
        BIN32,
        /** signed int (negative for patterns ≥ 2^63); SGLang and vLLM before 0.10.2. */
        I64
    }

    private static final BigInteger TWO_64 = BigInteger.ONE.shiftLeft(64);

    private final Format format;
    private final HashMode hashMode;

    public EngineEventEncoder(Format format, HashMode hashMode) {
        this.format = format;
        this.hashMode = hashMode;
    }

    public Format format() {
        return format;
    }

    /**
     * @param dpRank the envelope's third element; null writes nil. Ignored by {@link Format#ARRAY6}.
     */
    public byte[] encode(double ts, List<SimEvent> events, Integer dpRank) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            boolean withRank = format != Format.ARRAY6;
            p.packArrayHeader(withRank ? 3 : 2);
            p.packDouble(ts);
            p.packArrayHeader(events.size());
            for (SimEvent e : events) {
                writeEvent(p, e, format);
            }
            if (withRank) {
                if (dpRank == null) {
                    p.packNil();
                } else {
                    p.packInt(dpRank);
                }
            }
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void writeEvent(MessagePacker p, SimEvent event, Format shape) throws IOException {
        switch (event) {
            case SimEvent.Shaped s -> writeEvent(p, s.event(), s.format());
            case SimEvent.Stored s -> {
                if (shape == Format.MAP) {
                    writeStoredMap(p, s);
                } else {
                    writeStoredArray(p, s, shape);
                }
            }
            case SimEvent.Removed r -> {
                if (shape == Format.MAP) {
                    p.packMapHeader(r.groupIdx() == null ? 3 : 4);
                    key(p, "type", "BlockRemoved");
                    p.packString("block_hashes");
                    writeHashes(p, r.hashes());
                    key(p, "medium", r.medium());
                    if (r.groupIdx() != null) {
                        p.packString("group_idx");
                        p.packInt(r.groupIdx());
                    }
                } else {
                    int len = switch (shape) {
                        case ARRAY12 -> 4;
                        case ARRAY6 -> 2;
                        default -> 3;
                    };
                    p.packArrayHeader(len);
                    p.packString("BlockRemoved");
                    writeHashes(p, r.hashes());
                    if (len >= 3) {
                        nullable(p, r.medium());
                    }
                    if (len == 4) {
                        nullableInt(p, r.groupIdx());
                    }
                }
            }
            case SimEvent.Cleared c -> {
                if (shape == Format.MAP) {
                    p.packMapHeader(1);
                    key(p, "type", "AllBlocksCleared");
                } else {
                    p.packArrayHeader(1);
                    p.packString("AllBlocksCleared");
                }
            }
            case SimEvent.Unknown u -> {
                if (shape == Format.MAP) {
                    p.packMapHeader(2);
                    key(p, "type", u.type());
                    p.packString("block_hashes");
                    writeHashes(p, u.hashes());
                } else {
                    p.packArrayHeader(2);
                    p.packString(u.type());
                    writeHashes(p, u.hashes());
                }
            }
        }
    }

    private void writeStoredMap(MessagePacker p, SimEvent.Stored s) throws IOException {
        p.packMapHeader(s.groupIdx() == null ? 8 : 9);
        key(p, "type", "BlockStored");
        p.packString("block_hashes");
        writeHashes(p, s.hashes());
        p.packString("parent_block_hash");
        writeParent(p, s.parent());
        p.packString("token_ids");
        writeTokens(p, s);
        p.packString("block_size");
        p.packInt(s.blockSize());
        p.packString("lora_id");
        nullableInt(p, s.loraId());
        key(p, "medium", s.medium());
        key(p, "lora_name", s.loraName());
        if (s.groupIdx() != null) {
            p.packString("group_idx");
            p.packInt(s.groupIdx());
        }
    }

    private void writeStoredArray(MessagePacker p, SimEvent.Stored s, Format shape) throws IOException {
        int len = switch (shape) {
            case ARRAY12 -> 12;
            case ARRAY6 -> 6;
            default -> 7;
        };
        p.packArrayHeader(len);
        p.packString("BlockStored");
        writeHashes(p, s.hashes());
        writeParent(p, s.parent());
        writeTokens(p, s);
        p.packInt(s.blockSize());
        nullableInt(p, s.loraId());
        if (len >= 7) {
            nullable(p, s.medium());
        }
        if (len == 12) {
            nullable(p, s.loraName());
            p.packNil(); // extra_keys
            nullableInt(p, s.groupIdx());
            p.packNil(); // kv_cache_spec_kind
            p.packNil(); // kv_cache_spec_sliding_window
        }
    }

    private void writeParent(MessagePacker p, Long parent) throws IOException {
        if (parent == null) {
            p.packNil();
        } else {
            writeHash(p, parent);
        }
    }

    private void writeHashes(MessagePacker p, long[] hashes) throws IOException {
        p.packArrayHeader(hashes.length);
        for (long h : hashes) {
            writeHash(p, h);
        }
    }

    private void writeHash(MessagePacker p, long h) throws IOException {
        switch (hashMode) {
            case I64 -> p.packLong(h);
            case U64 -> {
                if (h >= 0) {
                    p.packLong(h);
                } else {
                    p.packBigInteger(BigInteger.valueOf(h).add(TWO_64));
                }
            }
            case BIN32 -> {
                byte[] digest = new byte[32];
                // a stand-in for the leading digest bytes; only the last 8 carry the key
                long filler = h * 0x9E3779B97F4A7C15L;
                for (int i = 0; i < 24; i++) {
                    digest[i] = (byte) (filler >>> ((i % 8) * 8));
                }
                for (int i = 0; i < 8; i++) {
                    digest[24 + i] = (byte) (h >>> (56 - 8 * i));
                }
                p.packBinaryHeader(32);
                p.writePayload(digest);
            }
        }
    }

    private static void writeTokens(MessagePacker p, SimEvent.Stored s) throws IOException {
        int[] tokens = s.tokens();
        if (s.eagle()) {
            // SGLang's EAGLE page: (raw[j], raw[j + 1]) for each position, a tuple that msgspec writes as an array
            p.packArrayHeader(Math.max(0, tokens.length - 1));
            for (int j = 0; j + 1 < tokens.length; j++) {
                p.packArrayHeader(2);
                p.packLong(Integer.toUnsignedLong(tokens[j]));
                p.packLong(Integer.toUnsignedLong(tokens[j + 1]));
            }
            return;
        }
        p.packArrayHeader(tokens.length);
        for (int t : tokens) {
            p.packLong(Integer.toUnsignedLong(t));
        }
    }

    private static void key(MessagePacker p, String key, String value) throws IOException {
        p.packString(key);
        nullable(p, value);
    }

    private static void nullable(MessagePacker p, String value) throws IOException {
        if (value == null) {
            p.packNil();
        } else {
            p.packString(value);
        }
    }

    private static void nullableInt(MessagePacker p, Integer value) throws IOException {
        if (value == null) {
            p.packNil();
        } else {
            p.packInt(value);
        }
    }
}

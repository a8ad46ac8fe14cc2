package io.kvindexer.indexer.event;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/**
 * Test helper: builds msgpack payloads from plain Java values with msgpack-core's packer (Lists → arrays,
 * Maps → maps in iteration order, Long/Integer → smallest int form, BigInteger → uint64, byte[] → bin,
 * Float → float32, Double → float64, null → nil, int[] → array of the ints read unsigned, long[] → array of
 * uint64), and converts hex.
 */
public final class Msgpack {

    static final double TS = 1757500000.25;

    private Msgpack() {}

    static byte[] hex(String hex) {
        return HexFormat.of().parseHex(hex.replaceAll("\\s+", ""));
    }

    public static byte[] pack(Object value) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            write(p, value);
            p.flush();
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code [TS, events, rank]}. */
    static byte[] batch(Object rank, Object... events) {
        return pack(Arrays.asList(TS, Arrays.asList(events), rank));
    }

    static List<Object> list(Object... items) {
        return Arrays.asList(items);
    }

    /** A map with keys and values alternating, in the given order. */
    public static Map<String, Object> map(Object... keysAndValues) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            m.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return m;
    }

    /** A map BlockRemoved of {@code hashes}, with more keys and values alternating. */
    static Map<String, Object> mapRemoved(Object hashes, Object... more) {
        Object[] kv = Arrays.copyOf(new Object[] {"type", "BlockRemoved", "block_hashes", hashes}, 4 + more.length);
        System.arraycopy(more, 0, kv, 4, more.length);
        return map(kv);
    }

    static List<Object> ints(int fromInclusive, int toInclusive) {
        Object[] out = new Object[toInclusive - fromInclusive + 1];
        for (int i = 0; i < out.length; i++) {
            out[i] = (long) (fromInclusive + i);
        }
        return Arrays.asList(out);
    }

    private static void write(MessageBufferPacker p, Object v) throws IOException {
        switch (v) {
            case null -> p.packNil();
            case String s -> p.packString(s);
            case Integer i -> p.packLong(i);
            case Long l -> p.packLong(l);
            case BigInteger b -> p.packBigInteger(b);
            case Double d -> p.packDouble(d);
            case Float f -> p.packFloat(f);
            case Boolean b -> p.packBoolean(b);
            case byte[] b -> {
                p.packBinaryHeader(b.length);
                p.writePayload(b);
            }
            case int[] a -> {
                p.packArrayHeader(a.length);
                for (int i : a) {
                    p.packLong(Integer.toUnsignedLong(i));
                }
            }
            case long[] a -> {
                p.packArrayHeader(a.length);
                for (long l : a) {
                    p.packBigInteger(new BigInteger(Long.toUnsignedString(l)));
                }
            }
            case List<?> list -> {
                p.packArrayHeader(list.size());
                for (Object o : list) {
                    write(p, o);
                }
            }
            case Map<?, ?> m -> {
                p.packMapHeader(m.size());
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    write(p, e.getKey());
                    write(p, e.getValue());
                }
            }
            default -> throw new IllegalArgumentException("cannot pack " + v.getClass());
        }
    }
}

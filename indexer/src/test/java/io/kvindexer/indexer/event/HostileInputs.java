package io.kvindexer.indexer.event;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/** Seeded generators of hostile event payloads, shared by the decoder fuzz and the live-listener fuzz. */
public final class HostileInputs {

    private HostileInputs() {}

    /** A payload the decoder rejects (it retries generators until one is rejected). */
    public static byte[] rejected(Random random) throws IOException {
        EngineEventDecoder decoder = new EngineEventDecoder();
        while (true) {
            byte[] p = switch (random.nextInt(3)) {
                case 0 -> randomMsgpack(random);
                case 1 -> hugeDeclaredLength(random);
                default -> nearValidBatch(random);
            };
            try {
                decoder.decode(p);
            } catch (EventDecodeException expected) {
                return p;
            }
        }
    }

    public static byte[] mutate(byte[] original, Random random) {
        byte[] out = original.clone();
        int edits = 1 + random.nextInt(4);
        for (int k = 0; k < edits && out.length > 0; k++) {
            switch (random.nextInt(5)) {
                case 0 -> out[random.nextInt(out.length)] = (byte) random.nextInt(256);
                case 1 -> out[random.nextInt(out.length)] ^= (byte) (1 << random.nextInt(8));
                case 2 -> out = java.util.Arrays.copyOf(out, random.nextInt(out.length + 1));
                case 3 -> {
                    int[] markers = {
                        0xdd, 0xdf, 0xdb, 0xc6, 0xcf, 0xd3, 0xdc, 0xde, 0xc4, 0xc0, 0x9f, 0x8f, 0xbf, 0xc7, 0xc9, 0xd4,
                        0xd8, 0xca, 0xcb, 0xc1
                    };
                    out[random.nextInt(out.length)] = (byte) markers[random.nextInt(markers.length)];
                }
                default -> {
                    byte[] tail = new byte[random.nextInt(16)];
                    random.nextBytes(tail);
                    byte[] longer = java.util.Arrays.copyOf(out, out.length + tail.length);
                    System.arraycopy(tail, 0, longer, out.length, tail.length);
                    out = longer;
                }
            }
        }
        return out;
    }

    public static byte[] randomMsgpack(Random random) throws IOException {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            packRandom(p, random, 0);
            return p.toByteArray();
        }
    }

    private static void packRandom(MessageBufferPacker p, Random random, int depth) throws IOException {
        switch (depth > 5 ? random.nextInt(7) : random.nextInt(10)) {
            case 0 -> p.packNil();
            case 1 -> p.packBoolean(random.nextBoolean());
            case 2 -> p.packLong(random.nextLong());
            case 3 -> p.packDouble(random.nextDouble() * 1e300);
            case 4 -> p.packString(randomWord(random));
            case 5 -> {
                byte[] b = new byte[random.nextInt(40)];
                random.nextBytes(b);
                p.packBinaryHeader(b.length).writePayload(b);
            }
            case 6 ->
                p.packBigInteger(java.math.BigInteger.valueOf(random.nextLong())
                        .abs()
                        .shiftLeft(1)
                        .add(java.math.BigInteger.ONE)
                        .min(new java.math.BigInteger("18446744073709551615")));
            case 7, 8 -> {
                int n = random.nextInt(6);
                p.packArrayHeader(n);
                for (int i = 0; i < n; i++) {
                    packRandom(p, random, depth + 1);
                }
            }
            default -> {
                int n = random.nextInt(5);
                p.packMapHeader(n);
                for (int i = 0; i < n; i++) {
                    if (random.nextBoolean()) {
                        p.packString(randomWord(random));
                    } else {
                        packRandom(p, random, depth + 1);
                    }
                    packRandom(p, random, depth + 1);
                }
            }
        }
    }

    /** The words the decoder knows (its event tags and field keys), some values, and odd strings. */
    private static final String[] WORDS = Stream.of(
                    Arrays.stream(EventReader.TAGS),
                    Arrays.stream(EventReader.KEYS),
                    Stream.of("GPU", "CPU", "events", "ts", "data_parallel_rank", "", "\u0000", "\uffff"))
            .flatMap(words -> words)
            .toArray(String[]::new);

    private static String randomWord(Random random) {
        return WORDS[random.nextInt(WORDS.length)];
    }

    /** The batch envelope and event tags are right; the fields have random types and sizes. */
    public static byte[] nearValidBatch(Random random) throws IOException {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packArrayHeader(random.nextInt(4) == 0 ? 2 : 3);
            p.packDouble(1.0);
            int events = random.nextInt(4);
            p.packArrayHeader(events);
            for (int e = 0; e < events; e++) {
                int fields = 1 + random.nextInt(8);
                p.packArrayHeader(fields);
                p.packString(
                        random.nextInt(5) == 0
                                ? randomWord(random)
                                : new String[] {"BlockStored", "BlockRemoved", "AllBlocksCleared"}[random.nextInt(3)]);
                for (int f = 1; f < fields; f++) {
                    if (random.nextInt(3) == 0) {
                        int n = random.nextInt(5);
                        p.packArrayHeader(n);
                        for (int k = 0; k < n; k++) {
                            if (random.nextBoolean()) {
                                p.packLong(random.nextLong());
                            } else {
                                packRandom(p, random, 4);
                            }
                        }
                    } else {
                        packRandom(p, random, 3);
                    }
                }
            }
            if (random.nextBoolean()) {
                packRandom(p, random, 5);
            }
            return p.toByteArray();
        }
    }

    /** A container or blob header that declares up to 2^32-1 elements or bytes, followed by very little. */
    public static byte[] hugeDeclaredLength(Random random) {
        int[] markers = {0xdd, 0xdf, 0xdb, 0xc6, 0xc9};
        ByteBuffer b = ByteBuffer.allocate(64);
        int prefix = random.nextInt(3);
        if (prefix >= 1) {
            b.put((byte) 0x93).put((byte) 0xcb).putDouble(1.0); // [ts, ...
        }
        if (prefix == 2) {
            b.put((byte) 0x91); // [event ...
        }
        b.put((byte) markers[random.nextInt(markers.length)]);
        b.putInt(random.nextBoolean() ? -1 : 0x7fff_0000 + random.nextInt(0xffff));
        byte[] tail = new byte[random.nextInt(16)];
        random.nextBytes(tail);
        b.put(tail);
        return java.util.Arrays.copyOf(b.array(), b.position());
    }
}

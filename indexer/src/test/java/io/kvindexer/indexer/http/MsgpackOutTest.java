package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.function.ObjLongConsumer;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;

/** Our msgpack writer against msgpack-java's reader, at every boundary between two formats. */
class MsgpackOutTest {

    private static final long[] INTEGERS = {
        0,
        1,
        127,
        128,
        255,
        256,
        65_535,
        65_536,
        4_294_967_295L,
        4_294_967_296L,
        Long.MAX_VALUE,
        -1,
        -32,
        -33,
        Long.MIN_VALUE
    };

    private static final long[] UNSIGNED = {0, 9, 10, 99, 1_000_000_007L, Long.MAX_VALUE, Long.MIN_VALUE, -2, -1};

    @Test
    void integersReadBackAsWritten() throws IOException {
        assertEachReadsBack(
                INTEGERS,
                MsgpackOut::integer,
                (in, v) -> assertThat(in.unpackLong()).isEqualTo(v));
    }

    @Test
    void unsignedDecimalsAreTheStringsOfTheUnsignedValue() throws IOException {
        assertEachReadsBack(
                UNSIGNED,
                MsgpackOut::unsignedDecimal,
                (in, v) -> assertThat(in.unpackString()).isEqualTo(Long.toUnsignedString(v)));
    }

    /** Checks one value read back; msgpack-java's reads throw IOException. */
    private interface ReadBack {
        void check(MessageUnpacker in, long written) throws IOException;
    }

    /** Writes every value with {@code write}, then reads them back in order and finds nothing after them. */
    private static void assertEachReadsBack(long[] values, ObjLongConsumer<MsgpackOut> write, ReadBack read)
            throws IOException {
        byte[] bytes = MsgpackOut.bytes(out -> {
            for (long v : values) {
                write.accept(out, v);
            }
        });
        try (MessageUnpacker in = MessagePack.newDefaultUnpacker(bytes)) {
            for (long v : values) {
                read.check(in, v);
            }
            assertThat(in.hasNext()).isFalse();
        }
    }

    @Test
    void stringsAndHeadersOfEveryLengthFormat() throws IOException {
        String[] strings = {"", "a", "x".repeat(31), "x".repeat(32), "é".repeat(200), "y".repeat(70_000)};
        int[] sizes = {0, 15, 16, 65_535, 65_536};
        byte[] bytes = MsgpackOut.bytes(out -> {
            for (String s : strings) {
                out.string(s);
            }
            for (int n : sizes) {
                out.mapHeader(n).arrayHeader(n);
            }
            out.raw(MsgpackOut.encoded("key")).bool(true).bool(false);
        });
        try (MessageUnpacker in = MessagePack.newDefaultUnpacker(bytes)) {
            for (String s : strings) {
                assertThat(in.unpackString()).isEqualTo(s);
            }
            for (int n : sizes) {
                assertThat(in.unpackMapHeader()).isEqualTo(n);
                assertThat(in.unpackArrayHeader()).isEqualTo(n);
            }
            assertThat(in.unpackString()).isEqualTo("key");
            assertThat(in.unpackBoolean()).isTrue();
            assertThat(in.unpackBoolean()).isFalse();
            assertThat(in.hasNext()).isFalse();
        }
    }
}

package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

class FramesTest {

    @Test
    void seqIsEightBytesBigEndianUnsigned() {
        assertThat(HexFormat.of().formatHex(Frames.seqBytes(0x0102_0304_0506_0708L)))
                .isEqualTo("0102030405060708");
        assertThat(Frames.readSeq(Frames.seqBytes(-2L))).isEqualTo(-2L);
        assertThat(Frames.seqBytes(Frames.END_SEQ)).containsOnly((byte) 0xff).hasSize(8);
        assertThat(Frames.readSeq(new byte[] {1, 0})).isEqualTo(256);
    }

    @Test
    void onlyBracketedTcpHostsAreIpv6() {
        assertThat(Frames.isIpv6("tcp://[::1]:5557")).isTrue();
        assertThat(Frames.isIpv6("tcp://[fd00::12]:5557")).isTrue();
        assertThat(Frames.isIpv6("tcp://127.0.0.1:5557")).isFalse();
        assertThat(Frames.isIpv6("ipc:///tmp/x")).isFalse();
        assertThat(Frames.isIpv6(null)).isFalse();
    }

    @Test
    void multipartMessagesGoAndComeWhole() {
        try (ZContext context = new ZContext(1)) {
            ZMQ.Socket pull = context.createSocket(SocketType.PULL);
            pull.setReceiveTimeOut(100);
            int port = pull.bindToRandomPort("tcp://127.0.0.1");
            ZMQ.Socket push = context.createSocket(SocketType.PUSH);
            push.connect("tcp://127.0.0.1:" + port);

            assertThat(Frames.receive(pull))
                    .as("nothing sent yet: the timeout passes")
                    .isNull();
            assertThat(Frames.send(push, "t".getBytes(), Frames.seqBytes(7), Frames.EMPTY))
                    .isTrue();
            List<byte[]> got = null;
            for (int i = 0; i < 100 && got == null; i++) {
                got = Frames.receive(pull);
            }
            assertThat(got).hasSize(3);
            assertThat(got.get(0)).isEqualTo("t".getBytes());
            assertThat(Frames.readSeq(got.get(1))).isEqualTo(7);
            assertThat(got.get(2)).isEmpty();
        }
    }
}

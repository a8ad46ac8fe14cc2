package io.kvindexer.indexer.ingest.zmtp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The frame decoder on bytes cut anywhere, and the greeting and command bytes of ZMTP 3.0. */
class FrameReaderTest {

    private final List<List<byte[]>> messages = new ArrayList<>();
    private final List<String> commands = new ArrayList<>();
    private final FrameReader.Sink sink = new FrameReader.Sink() {
        @Override
        public void message(List<byte[]> frames) {
            messages.add(frames);
        }

        @Override
        public void command(byte[] body) {
            commands.add(Zmtp.commandName(body));
        }
    };

    @Test
    void messagesAndCommandsSurviveAnySplitOfTheBytes() throws Exception {
        byte[] big = new byte[70_000]; // the 8-byte size form
        big[69_999] = 7;
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        wire.write(Zmtp.ready("PUB"));
        wire.write(moreFrame(new byte[0])); // the empty topic frame
        wire.write(moreFrame(new byte[] {0, 0, 0, 0, 0, 0, 0, 9}));
        wire.write(Zmtp.frame(0, big));
        wire.write(Zmtp.ping(150));
        byte[] bytes = wire.toByteArray();
        for (int step : new int[] {1, 3, 255, bytes.length}) {
            messages.clear();
            commands.clear();
            FrameReader reader = new FrameReader(1 << 20);
            for (int p = 0; p < bytes.length; p += step) {
                reader.feed(ByteBuffer.wrap(bytes, p, Math.min(step, bytes.length - p)), sink);
            }
            assertThat(commands).containsExactly("READY", "PING");
            assertThat(messages).hasSize(1);
            List<byte[]> m = messages.get(0);
            assertThat(m).hasSize(3);
            assertThat(m.get(0)).isEmpty();
            assertThat(m.get(1)[7]).isEqualTo((byte) 9);
            assertThat(m.get(2)).hasSize(70_000).endsWith((byte) 7);
        }
    }

    /**
     * A peer that announces a frame near the limit and sends little of it holds what it sent: the whole announced size
     * was allocated at the header, 200 MiB per such connection.
     */
    @Test
    void aFrameAnnouncedLargeHoldsOnlyWhatArrived() throws Exception {
        FrameReader reader = new FrameReader(256L << 20);
        byte[] header =
                ByteBuffer.allocate(9).put((byte) 0x02).putLong(200L << 20).array(); // LONG, 200 MiB
        reader.feed(ByteBuffer.wrap(header), sink);
        reader.feed(ByteBuffer.wrap(new byte[100_000]), sink);
        assertThat(reader.bodyBytesHeld()).isBetween(100_000, 4 * 100_000);
        assertThat(messages).isEmpty();
    }

    /** libzmq puts a PONG it owes between the frames of a message it is in the middle of sending (under a backlog). */
    @Test
    void aCommandBetweenTheFramesOfAMessageIsHandledAndTheMessageGoesOn() throws Exception {
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        wire.write(moreFrame(new byte[0]));
        wire.write(Zmtp.pong(java.util.Arrays.copyOfRange(Zmtp.ping(150), 2, 9)));
        wire.write(moreFrame(new byte[] {0, 0, 0, 0, 0, 0, 0, 4}));
        wire.write(Zmtp.ping(150));
        wire.write(Zmtp.frame(0, new byte[] {1, 2, 3}));
        wire.write(Zmtp.frame(0, new byte[] {5}));
        FrameReader reader = new FrameReader(1 << 20);
        reader.feed(ByteBuffer.wrap(wire.toByteArray()), sink);
        assertThat(commands).containsExactly("PONG", "PING");
        assertThat(messages).hasSize(2);
        assertThat(messages.get(0)).hasSize(3);
        assertThat(messages.get(0).get(1)[7]).isEqualTo((byte) 4);
        assertThat(messages.get(0).get(2)).containsExactly(1, 2, 3);
        assertThat(messages.get(1).get(0)).containsExactly(5);
    }

    @Test
    void brokenFramesAreProtocolErrors() {
        FrameReader reader = new FrameReader(100);
        assertThrows(ZmtpException.class, () -> reader.feed(ByteBuffer.wrap(new byte[] {(byte) 0x80, 0}), sink));
        FrameReader small = new FrameReader(100);
        assertThrows(ZmtpException.class, () -> small.feed(ByteBuffer.wrap(Zmtp.frame(0, new byte[101])), sink));
    }

    @Test
    void theGreetingAndCommandsHaveTheRfcBytes() throws Exception {
        byte[] g = Zmtp.greeting();
        assertThat(g).hasSize(64);
        assertThat(g[0]).isEqualTo((byte) 0xff);
        assertThat(g[9]).isEqualTo((byte) 0x7f);
        assertThat(new byte[] {g[10], g[11]}).containsExactly(3, 0);
        assertThat(Zmtp.checkGreeting(g)).isEqualTo(30);
        byte[] curve = g.clone();
        System.arraycopy("CURVE".getBytes(java.nio.charset.StandardCharsets.US_ASCII), 0, curve, 12, 5);
        assertThrows(ZmtpException.class, () -> Zmtp.checkGreeting(curve));
        byte[] ready = Zmtp.ready("SUB");
        assertThat(ready[0]).isEqualTo((byte) Zmtp.FLAG_COMMAND);
        byte[] body = java.util.Arrays.copyOfRange(ready, 2, ready.length);
        assertThat(Zmtp.property(body, "socket-type")).isEqualTo("SUB");
        assertThat(Zmtp.subscribe(new byte[0])).containsExactly(0, 1, 1);
        byte[] ping = java.util.Arrays.copyOfRange(Zmtp.ping(150), 2, 9);
        byte[] withContext = java.util.Arrays.copyOf(ping, 9);
        withContext[7] = 'a';
        withContext[8] = 'b';
        assertThat(Zmtp.pong(withContext)).containsExactly(4, 7, 4, 'P', 'O', 'N', 'G', 'a', 'b');
    }

    private static byte[] moreFrame(byte[] body) {
        return Zmtp.frame(Zmtp.FLAG_MORE, body);
    }
}

package io.kvindexer.indexer.ingest.zmtp;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Decodes ZMTP 3.x frames (after the greeting) from whatever bytes arrive, in pieces of any size: whole messages
 * (their frames, MORE-chained) and commands go to a {@link Sink}, a command also when it comes between two frames of
 * a message. What it holds between reads is at most one
 * frame's header and body and the earlier frames of one unfinished message.
 */
public final class FrameReader {

    /** Where decoded messages and commands go. */
    public interface Sink {
        void message(List<byte[]> frames);

        void command(byte[] body) throws ZmtpException;
    }

    private final long maxFrame;
    private int flags = -1;
    private int sizeNeed;
    private int sizeHave;
    private long size;
    private byte[] body;
    private int bodyHave;
    private List<byte[]> parts;

    /** @param maxFrame the largest frame accepted; a larger one is a protocol error (memory stays bounded) */
    public FrameReader(long maxFrame) {
        this.maxFrame = maxFrame;
    }

    /** Consumes everything {@code in} holds. */
    public void feed(ByteBuffer in, Sink sink) throws ZmtpException {
        while (in.hasRemaining()) {
            if (flags < 0) {
                flags = in.get() & 0xff;
                if ((flags & ~(Zmtp.FLAG_MORE | Zmtp.FLAG_LONG | Zmtp.FLAG_COMMAND)) != 0) {
                    throw new ZmtpException("reserved frame flags set: " + flags);
                }
                sizeNeed = (flags & Zmtp.FLAG_LONG) != 0 ? 8 : 1;
                sizeHave = 0;
                size = 0;
                continue;
            }
            if (sizeHave < sizeNeed) {
                size = (size << 8) | (in.get() & 0xff);
                if (++sizeHave < sizeNeed) {
                    continue;
                }
                if (size < 0 || size > maxFrame) {
                    throw new ZmtpException(
                            "a frame of " + Long.toUnsignedString(size) + " bytes is larger than " + maxFrame);
                }
                body = new byte[(int) size];
                bodyHave = 0;
            }
            int n = Math.min(in.remaining(), body.length - bodyHave);
            in.get(body, bodyHave, n);
            bodyHave += n;
            if (bodyHave == body.length) {
                complete(sink);
            }
        }
    }

    /** Forgets a partly received frame or message (the connection it came from is gone). */
    public void reset() {
        flags = -1;
        body = null;
        parts = null;
    }

    private void complete(Sink sink) throws ZmtpException {
        byte[] frame = body;
        int f = flags;
        body = null;
        flags = -1;
        if ((f & Zmtp.FLAG_COMMAND) != 0) {
            // libzmq writes a PONG (or PING) as soon as it is due, between two frames of a message it is sending
            // when its buffer emptied there (seen under a backlog): the command is handled, the message goes on
            sink.command(frame);
            return;
        }
        if (parts == null) {
            parts = new ArrayList<>(4);
        }
        parts.add(frame);
        if ((f & Zmtp.FLAG_MORE) == 0) {
            List<byte[]> message = parts;
            parts = null;
            sink.message(message);
        }
    }
}

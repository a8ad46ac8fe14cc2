package io.kvindexer.indexer.ingest.zmtp;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
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

    /**
     * A frame's body grows from this size as its bytes arrive, up to the size its header announced: a peer that
     * announces a frame near {@code maxFrame} and then sends little of it holds what it sent (at most four times), not
     * what it announced.
     */
    static final int FIRST_BODY_BYTES = 64 * 1024;

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
                body = new byte[(int) Math.min(size, FIRST_BODY_BYTES)];
                bodyHave = 0;
            }
            int n = (int) Math.min(in.remaining(), size - bodyHave);
            if (bodyHave + n > body.length) {
                body = Arrays.copyOf(body, (int) Math.min(size, Math.max(4L * body.length, bodyHave + n)));
            }
            in.get(body, bodyHave, n);
            bodyHave += n;
            if (bodyHave == size) {
                complete(sink);
            }
        }
    }

    /** True while part of a message (or of a command) has arrived and the rest has not. */
    public boolean midMessage() {
        return flags >= 0 || parts != null;
    }

    /** The bytes the frame being received holds now (its body grows as it arrives). */
    int bodyBytesHeld() {
        return body == null ? 0 : body.length;
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

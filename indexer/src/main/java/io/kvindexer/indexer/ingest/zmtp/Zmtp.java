package io.kvindexer.indexer.ingest.zmtp;

import java.nio.charset.StandardCharsets;

/**
 * The bytes of ZMTP 3.0 with the NULL mechanism (rfc.zeromq.org 23; PING/PONG from 3.1, rfc 37) that a subscriber
 * needs: our greeting, the READY command, the subscription message, PONG and PING, and the checks of what the peer
 * sends. We greet as 3.0: a 3.1 peer (libzmq 4.2+, jeromq) then talks 3.0 framing with us and takes the
 * subscription as a message whose first byte is 1, which every ZMTP 3.x publisher accepts.
 */
public final class Zmtp {

    /** signature (10) + version (2) + mechanism (20) + as-server (1) + filler (31) */
    public static final int GREETING_SIZE = 64;

    public static final int FLAG_MORE = 0x01;
    public static final int FLAG_LONG = 0x02;
    public static final int FLAG_COMMAND = 0x04;

    private Zmtp() {}

    /** Our greeting: ZMTP 3.0, mechanism NULL, as a client. */
    public static byte[] greeting() {
        byte[] g = new byte[GREETING_SIZE];
        g[0] = (byte) 0xff;
        g[9] = 0x7f;
        g[10] = 3;
        g[11] = 0;
        byte[] mechanism = "NULL".getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(mechanism, 0, g, 12, mechanism.length);
        return g;
    }

    /**
     * Checks a peer's whole greeting and returns its version as {@code major * 10 + minor} (30, 31).
     *
     * @throws ZmtpException when it is not a ZMTP 3.x greeting with the NULL mechanism
     */
    public static int checkGreeting(byte[] g) throws ZmtpException {
        if ((g[0] & 0xff) != 0xff || g[9] != 0x7f) {
            throw new ZmtpException("the peer's greeting has no ZMTP signature");
        }
        if (g[10] < 3) {
            throw new ZmtpException("the peer speaks ZMTP " + g[10] + ".x; 3.0 or later is needed");
        }
        int end = 12;
        while (end < 32 && g[end] != 0) {
            end++;
        }
        String mechanism = new String(g, 12, end - 12, StandardCharsets.US_ASCII);
        if (!mechanism.equals("NULL")) {
            throw new ZmtpException("the peer asks for the " + mechanism + " security mechanism; only NULL is spoken");
        }
        return g[10] * 10 + Math.min(g[11], 9);
    }

    /** The READY command frame with one property, {@code Socket-Type}. */
    public static byte[] ready(String socketType) {
        byte[] name = "Socket-Type".getBytes(StandardCharsets.US_ASCII);
        byte[] value = socketType.getBytes(StandardCharsets.US_ASCII);
        byte[] body = new byte[6 + 1 + name.length + 4 + value.length];
        int p = putName(body, 0, "READY");
        body[p++] = (byte) name.length;
        System.arraycopy(name, 0, body, p, name.length);
        p += name.length;
        body[p++] = 0;
        body[p++] = 0;
        body[p++] = 0;
        body[p++] = (byte) value.length;
        System.arraycopy(value, 0, body, p, value.length);
        return frame(FLAG_COMMAND, body);
    }

    /** The subscription message of ZMTP 3.0: one frame, byte 1 then the topic prefix. */
    public static byte[] subscribe(byte[] topic) {
        byte[] body = new byte[1 + topic.length];
        body[0] = 1;
        System.arraycopy(topic, 0, body, 1, topic.length);
        return frame(0, body);
    }

    /** PING with a TTL in tenths of a second and an empty context. */
    public static byte[] ping(int ttlDeciseconds) {
        byte[] body = new byte[5 + 2];
        int p = putName(body, 0, "PING");
        body[p] = (byte) (ttlDeciseconds >>> 8);
        body[p + 1] = (byte) ttlDeciseconds;
        return frame(FLAG_COMMAND, body);
    }

    /** The PONG that answers a PING command whose body is {@code ping}: its context echoed. */
    public static byte[] pong(byte[] ping) {
        int context = Math.max(0, ping.length - 7);
        byte[] body = new byte[5 + context];
        int p = putName(body, 0, "PONG");
        System.arraycopy(ping, 7, body, p, context);
        return frame(FLAG_COMMAND, body);
    }

    /** The name of a command whose body is {@code body} ("READY", "PING", ...); empty when malformed. */
    public static String commandName(byte[] body) {
        if (body.length == 0 || body[0] + 1 > body.length) {
            return "";
        }
        return new String(body, 1, body[0] & 0xff, StandardCharsets.US_ASCII);
    }

    /** The value of property {@code name} (case-insensitive) in a READY body, or null. */
    public static String property(byte[] ready, String name) throws ZmtpException {
        int p = 1 + (ready[0] & 0xff);
        while (p < ready.length) {
            int n = ready[p] & 0xff;
            if (p + 1 + n + 4 > ready.length) {
                throw new ZmtpException("malformed READY metadata");
            }
            String key = new String(ready, p + 1, n, StandardCharsets.US_ASCII);
            p += 1 + n;
            long size = ((ready[p] & 0xffL) << 24)
                    | ((ready[p + 1] & 0xff) << 16)
                    | ((ready[p + 2] & 0xff) << 8)
                    | (ready[p + 3] & 0xff);
            p += 4;
            if (p + size > ready.length) {
                throw new ZmtpException("malformed READY metadata");
            }
            if (key.equalsIgnoreCase(name)) {
                return new String(ready, p, (int) size, StandardCharsets.US_ASCII);
            }
            p += (int) size;
        }
        return null;
    }

    /** The reason an ERROR command gives. */
    public static String errorReason(byte[] body) {
        int p = 1 + (body[0] & 0xff);
        if (p >= body.length) {
            return "";
        }
        int n = Math.min(body[p] & 0xff, body.length - p - 1);
        return new String(body, p + 1, n, StandardCharsets.US_ASCII);
    }

    /** One frame: flags (LONG added when the body needs it), size, body. */
    static byte[] frame(int flags, byte[] body) {
        boolean shortSize = body.length <= 255;
        byte[] f = new byte[(shortSize ? 2 : 9) + body.length];
        f[0] = (byte) (shortSize ? flags : flags | FLAG_LONG);
        int p = 1;
        if (shortSize) {
            f[p++] = (byte) body.length;
        } else {
            for (int i = 7; i >= 0; i--) {
                f[p++] = (byte) ((long) body.length >>> (8 * i));
            }
        }
        System.arraycopy(body, 0, f, p, body.length);
        return f;
    }

    private static int putName(byte[] body, int p, String name) {
        body[p++] = (byte) name.length();
        for (int i = 0; i < name.length(); i++) {
            body[p++] = (byte) name.charAt(i);
        }
        return p;
    }
}

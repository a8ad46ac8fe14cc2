package io.kvindexer.indexer.http;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * One request written byte for byte over a socket, for what a client library will not send (broken chunk framing):
 * the answer's status and body, and whether the server closed the connection after it.
 */
final class RawHttp {

    /** How long an open connection is watched for the server closing it. */
    private static final int CLOSE_WAIT_MS = 3_000;

    /** @param head the status line and headers, as sent */
    record Reply(int status, String body, boolean closed, String head) {
        /** The first value of header {@code name} (any case), or null. */
        String header(String name) {
            for (String line : head.split("\r\n")) {
                int colon = line.indexOf(':');
                if (colon > 0 && line.substring(0, colon).strip().equalsIgnoreCase(name)) {
                    return line.substring(colon + 1).strip();
                }
            }
            return null;
        }
    }

    private RawHttp() {}

    /** A connection to the server at {@code baseUrl} whose reads give up after {@code soTimeoutMs}. */
    static Socket connect(String baseUrl, int soTimeoutMs) throws IOException {
        Socket s = new Socket();
        s.connect(
                new InetSocketAddress("127.0.0.1", java.net.URI.create(baseUrl).getPort()));
        s.setSoTimeout(soTimeoutMs);
        return s;
    }

    /** One response with a Content-Length body (or none), as text: its head, then its body. */
    static String readResponse(InputStream in) throws IOException {
        String head = head(in);
        return head + new String(in.readNBytes(contentLength(head)), StandardCharsets.UTF_8);
    }

    static Reply exchange(int port, String request) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
            s.setSoTimeout(30_000);
            s.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
            s.getOutputStream().flush();
            InputStream in = new BufferedInputStream(s.getInputStream());
            String head = head(in);
            if (!head.startsWith("HTTP/1.1 ")) {
                throw new IOException("no HTTP response: " + head);
            }
            byte[] body = in.readNBytes(contentLength(head));
            s.setSoTimeout(CLOSE_WAIT_MS);
            return new Reply(
                    Integer.parseInt(head.substring(9, 12)),
                    new String(body, StandardCharsets.UTF_8),
                    closed(in),
                    head);
        }
    }

    private static String head(InputStream in) throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        for (int b; (b = in.read()) >= 0; ) {
            buf.write(b);
            if (buf.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
                break;
            }
        }
        return buf.toString(StandardCharsets.ISO_8859_1);
    }

    /** The error answers under test carry a Content-Length; a head without one is read as an empty body. */
    private static int contentLength(String head) {
        String lower = head.toLowerCase(Locale.ROOT);
        int at = lower.indexOf("\r\ncontent-length:");
        if (at < 0) {
            return 0;
        }
        return Integer.parseInt(
                lower.substring(at + 17, lower.indexOf("\r\n", at + 2)).strip());
    }

    /**
     * True when the server ends the connection (EOF or reset) before the socket's read timeout ({@link
     * #CLOSE_WAIT_MS} in {@link #exchange}); false if it stays open.
     */
    static boolean closed(InputStream in) throws IOException {
        try {
            return in.read() < 0;
        } catch (SocketTimeoutException open) {
            return false;
        } catch (SocketException reset) {
            return true;
        }
    }
}

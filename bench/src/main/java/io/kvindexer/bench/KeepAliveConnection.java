package io.kvindexer.bench;

import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;

/**
 * One keep-alive HTTP/1.1 connection of a load generator: it writes requests encoded once before the clock starts
 * ({@link #post}) and reads of each answer only its status and as many bytes as its Content-Length says. Its cost per
 * request is one write and the reads of the answer, the same for every endpoint and encoding, so a ratio of two
 * endpoints' rates measures the servers rather than a client that builds and parses every call (the JDK HttpClient
 * did, at about a quarter of the process's CPU, which pushed every ratio toward 1).
 */
final class KeepAliveConnection implements Closeable {

    private static final byte[] CONTENT_LENGTH = "content-length:".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CONNECTION_CLOSE = "connection: close".getBytes(StandardCharsets.US_ASCII);

    private final Socket socket;
    private final OutputStream out;
    private final InputStream in;
    private final byte[] buf = new byte[64 * 1024];
    private int pos;
    private int lim;
    private boolean closedByServer;

    KeepAliveConnection(URI uri) throws IOException {
        socket = new Socket(uri.getHost(), uri.getPort());
        socket.setTcpNoDelay(true);
        out = socket.getOutputStream();
        in = socket.getInputStream();
    }

    /** The whole request, head and body, of a POST of {@code body} to {@code uri}. */
    static byte[] post(URI uri, String contentType, byte[] body) {
        byte[] head = ("POST " + uri.getRawPath() + " HTTP/1.1\r\nHost: " + uri.getHost() + ":" + uri.getPort()
                        + "\r\nContent-Type: " + contentType + "\r\nContent-Length: " + body.length + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII);
        byte[] request = new byte[head.length + body.length];
        System.arraycopy(head, 0, request, 0, head.length);
        System.arraycopy(body, 0, request, head.length, body.length);
        return request;
    }

    /**
     * Sends one request made by {@link #post} and reads its answer through; returns the status. Answers without a
     * Content-Length (chunked ones) are not read: they fail, since no endpoint measured sends them.
     */
    int exchange(byte[] request) throws IOException {
        out.write(request);
        int end = lineEnd();
        if (end - pos < 12 || buf[pos + 8] != ' ') {
            throw new IOException("not an HTTP/1.1 status line");
        }
        int status = (buf[pos + 9] - '0') * 100 + (buf[pos + 10] - '0') * 10 + (buf[pos + 11] - '0');
        pos = end + 1;
        long length = -1;
        while ((end = lineEnd()) - pos > 1) { // a header; the empty line ("\r\n") ends them
            if (startsWith(CONTENT_LENGTH, end)) {
                length = digits(pos + CONTENT_LENGTH.length, end);
            } else if (startsWith(CONNECTION_CLOSE, end)) {
                closedByServer = true;
            }
            pos = end + 1;
        }
        pos = end + 1;
        if (length < 0) {
            throw new IOException("an answer without a Content-Length");
        }
        skip(length);
        return status;
    }

    /** True when the last answer said the server closes the connection after it. */
    boolean closedByServer() {
        return closedByServer;
    }

    /** The index of the '\n' ending the line at {@link #pos}, reading more of the answer as needed. */
    private int lineEnd() throws IOException {
        int from = pos;
        while (true) {
            for (int i = from; i < lim; i++) {
                if (buf[i] == '\n') {
                    return i;
                }
            }
            if (pos > 0) { // move the partial line to the buffer's start
                System.arraycopy(buf, pos, buf, 0, lim - pos);
                lim -= pos;
                pos = 0;
            }
            if (lim == buf.length) {
                throw new IOException("a header line longer than " + buf.length + " bytes");
            }
            from = lim;
            fill();
        }
    }

    private void fill() throws IOException {
        int n = in.read(buf, lim, buf.length - lim);
        if (n < 0) {
            throw new EOFException("the server closed the connection");
        }
        lim += n;
    }

    private boolean startsWith(byte[] lowerCase, int end) {
        if (end - pos < lowerCase.length) {
            return false;
        }
        for (int i = 0; i < lowerCase.length; i++) {
            if (Character.toLowerCase(buf[pos + i]) != lowerCase[i]) {
                return false;
            }
        }
        return true;
    }

    private long digits(int from, int end) throws IOException {
        long v = 0;
        boolean any = false;
        for (int i = from; i < end; i++) {
            byte b = buf[i];
            if (b >= '0' && b <= '9') {
                v = v * 10 + (b - '0');
                any = true;
            } else if (b != ' ' && b != '\r') {
                throw new IOException("a Content-Length that is not a number");
            }
        }
        if (!any) {
            throw new IOException("an empty Content-Length");
        }
        return v;
    }

    /** Reads past {@code n} bytes of body, those already buffered first. */
    private void skip(long n) throws IOException {
        long buffered = Math.min(n, lim - pos);
        pos += (int) buffered;
        n -= buffered;
        while (n > 0) {
            pos = 0;
            lim = 0;
            fill();
            int taken = (int) Math.min(n, lim);
            pos = taken;
            n -= taken;
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}

package io.kvindexer.indexer.http;

import io.helidon.common.uri.UriQuery;
import io.helidon.http.HeaderNames;
import io.helidon.http.Method;
import io.helidon.http.ServerResponseHeaders;
import io.helidon.http.ServerResponseTrailers;
import io.helidon.http.Status;
import io.helidon.webserver.http.Handler;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.io.OutputStream;
import java.util.function.UnaryOperator;

/**
 * The answer to a HEAD request: what the same GET would answer, status and headers, without the content (RFC 9110
 * section 9.3.2). Helidon 4.5 routes HEAD only to routes declared for it, and its HTTP/1 response writes whatever
 * entity a handler sends, HEAD or not (later versions refuse one), so the GET handlers answer HEAD through this
 * response: the content they send is not written, its length is ({@code Content-Length}, as RFC 9110 section 8.6
 * allows only with the length GET would send). The dump, whose length only writing it would tell, sends its headers
 * without one ({@link #sendUnknownLength}).
 */
final class HeadResponse implements ServerResponse {

    private final ServerResponse res;

    private HeadResponse(ServerResponse res) {
        this.res = res;
    }

    /** {@code res} itself, or for a HEAD request the response that sends no content. */
    static ServerResponse of(ServerRequest req, ServerResponse res) {
        return req.prologue().method().equals(Method.HEAD) && !(res instanceof HeadResponse)
                ? new HeadResponse(res)
                : res;
    }

    /** {@code get}, answering a HEAD request. */
    static Handler of(Handler get) {
        return (req, res) -> get.handle(req, of(req, res));
    }

    @Override
    public ServerResponse status(Status status) {
        res.status(status);
        return this;
    }

    @Override
    public Status status() {
        return res.status();
    }

    @Override
    public ServerResponse header(io.helidon.http.Header header) {
        res.header(header);
        return this;
    }

    @Override
    public void send() {
        res.send();
    }

    @Override
    public void send(byte[] bytes) {
        send(bytes, 0, bytes.length);
    }

    @Override
    public void send(byte[] bytes, int position, int length) {
        sendLength(length);
    }

    @Override
    public void send(Object entity) {
        if (!(entity instanceof byte[] bytes)) {
            throw new IllegalArgumentException(
                    "HEAD answers take bytes, not " + entity.getClass().getName());
        }
        send(bytes);
    }

    /**
     * Sends the status and headers set so far with no length, for content whose length is known only by writing it
     * (the dump, which GET streams): RFC 9110 section 9.3.2 lets a HEAD answer leave out what only the content
     * determines, and counting it would cost what sending it does.
     */
    void sendUnknownLength() {
        res.sink(HeadersOnly.TYPE);
    }

    private void sendLength(long length) {
        if (!res.headers().contains(HeaderNames.CONTENT_LENGTH)) {
            res.headers().contentLength(length);
        }
        res.send(); // Helidon keeps a Content-Length that is set, and writes no content
    }

    @Override
    public boolean isSent() {
        return res.isSent();
    }

    /** Counts what is written instead of sending it; closing it sends the headers. */
    @Override
    public OutputStream outputStream() {
        return new OutputStream() {
            private long length;
            private boolean closed;

            @Override
            public void write(int b) {
                length++;
            }

            @Override
            public void write(byte[] b, int off, int len) {
                length += len;
            }

            @Override
            public void close() {
                if (!closed) {
                    closed = true;
                    sendLength(length);
                }
            }
        };
    }

    @Override
    public long bytesWritten() {
        return res.bytesWritten();
    }

    @Override
    public ServerResponse beforeSend(Runnable listener) {
        res.beforeSend(listener);
        return this;
    }

    @Override
    public ServerResponse whenSent(Runnable listener) {
        res.whenSent(listener);
        return this;
    }

    @Override
    public ServerResponse reroute(String newPath) {
        res.reroute(newPath);
        return this;
    }

    @Override
    public ServerResponse reroute(String path, UriQuery query) {
        res.reroute(path, query);
        return this;
    }

    @Override
    public ServerResponse next() {
        res.next();
        return this;
    }

    @Override
    public ServerResponseHeaders headers() {
        return res.headers();
    }

    @Override
    public ServerResponseTrailers trailers() {
        return res.trailers();
    }

    @Override
    public void streamResult(String result) {
        res.streamResult(result);
    }

    @Override
    public void streamFilter(UnaryOperator<OutputStream> filterFunction) {
        res.streamFilter(filterFunction);
    }
}

package io.kvindexer.indexer.http;

import io.helidon.http.DirectHandler;
import io.helidon.http.HeaderValues;
import io.helidon.http.RequestException;
import io.helidon.http.Status;
import io.helidon.webserver.CloseConnectionException;
import io.helidon.webserver.http.DirectTransportRequest;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.ServerRequest;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * A request body as Helidon's HTTP/1 reader unframes it while a route reads it. Its chunk parser fails on a size line
 * that is no hex number with a bare {@code NumberFormatException}, which the routes' error mapping would answer as a
 * bug (500, connection kept), and on a size or an end it cannot take with a 400 that keeps the connection. Either way
 * nothing after it on the connection can be framed, so both become what Helidon answers for a request it cannot
 * parse: a 400 with the reason (JSON, from the direct handlers), {@code Connection: close}, and the connection
 * closed once that is sent ({@link #filter}: Helidon only sends the header). Only failures of the reads wrapped
 * here are mapped, and only these two kinds: any other exception stays what it is.
 */
final class BodyFraming extends FilterInputStream {

    /** In the request's context once its framing failed. */
    private record Broken() {}

    private static final int MAX_DETAIL = 100;
    /** Helidon's message for a last chunk followed by anything but an empty line */
    private static final String HELIDON_BAD_END = "Invalid terminating chunk";

    private final ServerRequest req;

    BodyFraming(InputStream helidonEntity, ServerRequest req) {
        super(helidonEntity);
        this.req = req;
    }

    /**
     * What follows the answer on the connection. After a request whose body framing failed: nothing, the connection
     * is closed. After a request or an answer that says {@code Connection: close} (the client's, or ours while a stop
     * is coming): nothing either, as RFC 9112 section 9.6 wants; Helidon 4.5 sends the header but goes on reading the
     * connection (helidon#12324), so a client that waits for the end of the connection waited for good, and a body
     * left unread would be taken for the next request. After one whose body was not read to its end ({@link
     * RequestBody#leftUnread}: refused before it was read, or reading stopped at an error), Helidon reads the rest of
     * the body to keep the connection, with no time limit: the body's read deadline bounds that too ({@link
     * BodyDeadline#drainRest}), so a client that declared a body and then stalls no longer holds the connection for
     * good.
     */
    static Filter filter() {
        return (chain, req, res) -> {
            chain.proceed();
            if (req.context().get(Broken.class).isPresent()) {
                throw new CloseConnectionException("the request body's chunk framing is broken");
            }
            if (req.headers().containsToken(HeaderValues.CONNECTION_CLOSE)
                    || res.headers().containsToken(HeaderValues.CONNECTION_CLOSE)) {
                throw new CloseConnectionException("answered with Connection: close");
            }
            if (RequestBody.leftUnread(req)) {
                BodyDeadline deadline = BodyDeadline.current();
                if (deadline != null) {
                    deadline.drainRest();
                }
            }
        };
    }

    @Override
    public int read() throws IOException {
        try {
            return super.read();
        } catch (NumberFormatException | RequestException e) {
            throw refused(e);
        }
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        try {
            return super.read(b, off, len);
        } catch (NumberFormatException | RequestException e) {
            throw refused(e);
        }
    }

    private RuntimeException refused(RuntimeException e) {
        if (e instanceof RequestException r && r.status().code() != Status.BAD_REQUEST_400.code()) {
            return r; // e.g. Helidon's own 413 backstop, which already closes the connection
        }
        String detail = e.getMessage() == null ? "" : e.getMessage();
        if (detail.length() > MAX_DETAIL) {
            detail = detail.substring(0, MAX_DETAIL) + "...";
        }
        // the JDK's message quotes the size line: a ';' in it is a chunk extension (RFC 9112 section 7.1.1); Helidon's
        // "Invalid terminating chunk" is a line after the last chunk, which clients send as trailer fields (7.1.2)
        String reason = !(e instanceof NumberFormatException)
                ? detail.equals(HELIDON_BAD_END)
                        ? "trailer fields are not supported (the last chunk must be followed by an empty line)"
                        : detail
                : detail.contains(";")
                        ? "chunk extensions are not supported (" + detail + ")"
                        : "invalid chunk size (" + detail + ")";
        req.context().register(new Broken());
        return RequestException.builder()
                .type(DirectHandler.EventType.BAD_REQUEST)
                .status(Status.BAD_REQUEST_400)
                .request(DirectTransportRequest.create(req.prologue(), req.headers())) // its HTTP/1 gets the close
                .setKeepAlive(false)
                .message("malformed chunked request body: " + reason)
                .build();
    }
}

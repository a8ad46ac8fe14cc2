package io.kvindexer.indexer.http;

import io.helidon.http.BadRequestException;
import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.HttpMediaType;
import io.helidon.webserver.http.ServerRequest;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Locale;

/**
 * Admission of a request body, before any parsing: the content type (415), the size limit declared (413 at once)
 * and actual (413 when a body without or with a lying Content-Length grows past it), and the read deadline, armed
 * here and disarmed at the body's end or on {@link #close}. Readers take {@link #stream()} and pass their read
 * failures to {@link #failure} to get the answer admission owes the client.
 */
final class RequestBody implements AutoCloseable {

    /** In the request's context once its body was read to its end. */
    private record Whole() {}

    private final ServerRequest req;
    private final long limit;
    private final BodyDeadline deadline; // null when the routing has no read deadline
    private final Limited stream;

    private RequestBody(ServerRequest req, long limit) {
        this.req = req;
        this.limit = limit;
        this.deadline = BodyDeadline.current();
        this.stream = new Limited(
                new BodyFraming(req.content().inputStream(), req),
                limit,
                req.headers().contentLength().orElse(-1L),
                deadline);
        if (deadline != null) {
            deadline.arm();
        }
    }

    /** Admits a body of type {@code application/<subtype>} (e.g. {@code json}) of at most {@code limit} bytes. */
    static RequestBody open(ServerRequest req, long limit, String subtype) {
        if (!isApplication(contentType(req), subtype)) {
            throw new ApiError(415, "expected request with `Content-Type: application/" + subtype + "`");
        }
        if (req.headers().contains(HeaderNames.CONTENT_LENGTH)) {
            long declared = req.headers().contentLength().orElse(0L);
            if (declared > limit) {
                throw ApiError.tooLarge(limit);
            }
        }
        return new RequestBody(req, limit);
    }

    /**
     * True when {@code type} is {@code application/<subtype>} in any case, the whitespace RFC 9110 (section 5.6.6)
     * allows before a parameter's {@code ;} aside (Helidon leaves it on the subtype); for {@code json}, also any
     * {@code application/<name>+json} ({@code vnd.api+json}), which axum, Dynamo's server, takes as JSON.
     */
    static boolean isApplication(HttpMediaType type, String subtype) {
        if (type == null || !"application".equalsIgnoreCase(type.mediaType().type())) {
            return false;
        }
        String given = type.mediaType().subtype().strip().toLowerCase(Locale.ROOT);
        return given.equals(subtype) || (subtype.equals("json") && given.endsWith("+json"));
    }

    /**
     * The request's {@code Content-Type}, or null without one. A value Helidon cannot parse ({@code text},
     * {@code application/json;}) is the client's error: a 415 that quotes it, not the exception Helidon throws,
     * which the routes' error mapping would answer as a bug (500).
     */
    static HttpMediaType contentType(ServerRequest req) {
        try {
            return req.headers().contentType().orElse(null);
        } catch (BadRequestException | IllegalArgumentException e) {
            String value = req.headers().first(HeaderNames.CONTENT_TYPE).orElse("");
            throw new ApiError(
                    415,
                    "malformed `Content-Type` header `" + value + "`; expected a media type such as"
                            + " `application/json`");
        }
    }

    /** The body, capped at the limit. */
    InputStream stream() {
        return stream;
    }

    /**
     * A body read whole: the first {@code length} bytes of {@code array}, which may be longer. Closing it gives a
     * pooled array back ({@link BodyBuffers}): nothing may read the bytes (or a view of them) after that.
     */
    record Bytes(byte[] array, int length) implements AutoCloseable {
        @Override
        public void close() {
            BodyBuffers.give(array);
        }
    }

    /**
     * Admits a body (as {@link #open}) and reads it whole, the deadline disarmed when done. With a Content-Length
     * (what clients send) the bytes go straight into a pooled array of at least that size: one copy out of the
     * connection's buffers, none to grow or trim. A failed read is answered as admission explains it (408, 413),
     * else 400.
     */
    static Bytes readAll(ServerRequest req, long limit, String subtype) {
        try (RequestBody body = open(req, limit, subtype)) {
            try {
                return body.readAll(req.headers().contentLength().orElse(-1L));
            } catch (IOException | UncheckedIOException e) {
                IOException cause = e instanceof UncheckedIOException u ? u.getCause() : (IOException) e;
                ApiError admission = body.failure(cause);
                throw admission != null
                        ? admission
                        : new ApiError(400, "cannot read the request body: " + cause.getMessage());
            }
        }
    }

    private Bytes readAll(long declared) throws IOException {
        if (declared < 0 || declared > Integer.MAX_VALUE - 8) {
            byte[] bytes = stream.readAllBytes(); // chunked: Limited stops it at the limit
            return new Bytes(bytes, bytes.length);
        }
        byte[] bytes = BodyBuffers.take((int) declared); // admitted: declared <= limit
        try {
            return new Bytes(bytes, stream.readNBytes(bytes, 0, (int) declared));
        } catch (IOException | RuntimeException e) {
            BodyBuffers.give(bytes);
            throw e;
        }
    }

    /** The answer for a failed read that admission explains (408 deadline passed, 413 too large), else null. */
    ApiError failure(IOException e) {
        if (deadline != null && deadline.timedOut()) {
            return new ApiError(408, "request body not received in time"); // already answered by the watchdog
        }
        if (e instanceof TooLarge) {
            return ApiError.tooLarge(limit);
        }
        return null;
    }

    /**
     * True when the request has a body that was not read to its end: the body was refused before it was read (415,
     * 413, 401, 406, ...) or reading stopped at an error. Helidon reads the rest after the answer to keep the
     * connection ({@link BodyFraming#filter} bounds that).
     */
    static boolean leftUnread(ServerRequest req) {
        boolean body = req.headers().contains(HeaderValues.TRANSFER_ENCODING_CHUNKED)
                || req.headers().contentLength().orElse(0L) > 0;
        return body
                && req.context().get(Whole.class).isEmpty()
                && !req.content().consumed();
    }

    /**
     * Stops the deadline (reading is over, whether or not the body was read to its end). A body whose deadline
     * passed is not acted on, even if its last bytes arrived as it passed: the watchdog answered 408.
     */
    @Override
    public void close() {
        if (stream.whole()) {
            req.context().register(new Whole());
        }
        if (deadline != null) {
            deadline.disarm();
            if (deadline.timedOut()) {
                throw new ApiError(408, "request body not received in time"); // already answered
            }
        }
    }

    /** Thrown by {@link Limited} when a body grows past the limit. */
    private static final class TooLarge extends IOException {
        TooLarge() {
            super("body too large", null);
        }
    }

    /**
     * Caps the body at the limit and stops the read deadline at the body's end, before the handler acts on it; knows
     * whether the body was read to its end (its last declared byte, or the end of its chunks).
     */
    private static final class Limited extends FilterInputStream {
        private final BodyDeadline deadline;
        private final long declared; // -1: chunked
        private final long limit;
        private long remaining;
        private boolean ended;

        Limited(InputStream in, long limit, long declared, BodyDeadline deadline) {
            super(in);
            this.limit = limit;
            this.remaining = limit;
            this.declared = declared;
            this.deadline = deadline;
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b < 0) {
                ended();
            } else if (--remaining < 0) {
                throw new TooLarge();
            }
            return b;
        }

        @Override
        public int read(byte[] buf, int off, int len) throws IOException {
            int n = super.read(buf, off, len);
            if (n < 0) {
                ended();
            } else if (n > 0) {
                remaining -= n;
                if (remaining < 0) {
                    throw new TooLarge();
                }
            }
            return n;
        }

        private void ended() {
            ended = true;
            if (deadline != null) {
                deadline.disarm();
            }
        }

        boolean whole() {
            return ended || declared >= 0 && limit - remaining == declared;
        }
    }
}

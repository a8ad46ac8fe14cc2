package io.kvindexer.indexer.http;

import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.Headers;
import io.helidon.http.encoding.ContentDecoder;
import io.helidon.http.encoding.ContentEncoder;
import io.helidon.http.encoding.ContentEncodingContext;
import io.helidon.http.encoding.ContentEncodingContextConfig;
import io.helidon.webserver.http.Filter;
import java.util.List;
import java.util.Locale;
import java.util.NoSuchElementException;

/**
 * The server's content codings: a request body may say {@code Content-Encoding: identity} (any case, any spaces
 * around it) and is read as it is. RFC 9110 section 8.4.1 gives {@code identity} a meaning only in
 * {@code Accept-Encoding}, but a client that sends it means "not encoded", and servers take it; Helidon, with no
 * coding installed, refused every {@code Content-Encoding}. Any other coding is still refused before any route (the
 * 415 of {@link IndexerRouting}). Responses are coded as by Helidon's default context, which this delegates to.
 */
final class RequestCodings implements ContentEncodingContext {

    private static final String IDENTITY = "identity";

    private final ContentEncodingContext responses = ContentEncodingContext.create();

    private static boolean identity(String coding) {
        return IDENTITY.equals(coding.strip().toLowerCase(Locale.ROOT));
    }

    /**
     * The refusal of a request whose body is coded: {@code codings} as the request gave them, and what to send
     * instead (RFC 9110 section 15.5.16: a coding the server does not take is a 415).
     */
    static String unsupported(String codings) {
        return "`Content-Encoding: " + ApiError.quoted(codings) + "` is not supported: send the request body"
                + " uncompressed, without Content-Encoding";
    }

    /**
     * Refuses a body whose {@code Content-Encoding} lines name a coding after a first {@code identity} line (Helidon
     * only asks about the first; RFC 9110 section 5.3 makes the lines one list, as {@code identity, gzip} is): the
     * same 415 as Helidon's refusal gets from {@link IndexerRouting}, and the connection closed, the body unread.
     */
    static Filter filter() {
        return (chain, req, res) -> {
            List<String> codings = req.headers().contains(HeaderNames.CONTENT_ENCODING)
                    ? req.headers().get(HeaderNames.CONTENT_ENCODING).allValues()
                    : List.of();
            if (codings.stream().allMatch(RequestCodings::identity)) {
                chain.proceed();
                return;
            }
            res.header(HeaderNames.ACCEPT_ENCODING, IDENTITY);
            res.header(HeaderValues.CONNECTION_CLOSE);
            JsonOut.error(HeadResponse.of(req, res), 415, unsupported(String.join(", ", codings)));
        };
    }

    @Override
    public boolean contentDecodingEnabled() {
        return true; // else Helidon refuses any Content-Encoding before asking which
    }

    @Override
    public boolean contentDecodingSupported(String coding) {
        return identity(coding);
    }

    @Override
    public ContentDecoder decoder(String coding) {
        if (!identity(coding)) {
            throw new NoSuchElementException("no decoder for content coding " + coding);
        }
        return ContentDecoder.NO_OP;
    }

    @Override
    public boolean contentEncodingEnabled() {
        return responses.contentEncodingEnabled();
    }

    @Override
    public boolean contentEncodingSupported(String coding) {
        return responses.contentEncodingSupported(coding);
    }

    @Override
    public ContentEncoder encoder(String coding) {
        return responses.encoder(coding);
    }

    @Override
    public ContentEncoder encoder(Headers headers) {
        return responses.encoder(headers);
    }

    @Override
    public ContentEncodingContextConfig prototype() {
        return responses.prototype();
    }
}

package io.kvindexer.indexer.http;

import io.helidon.common.media.type.MediaType;
import io.helidon.http.BadRequestException;
import io.helidon.webserver.http.ServerRequest;

/**
 * The media type of an answer that comes in two, chosen from the request's {@code Accept} by Helidon's
 * {@code bestAccepted}: the type of highest q-value wins (RFC 9110 section 12.5.1). The route's default wins a
 * tie, and is the answer without {@code Accept}, when {@code Accept} takes neither type (as before: no 406) and when
 * {@code Accept} is no list of media types ({@code text}, {@code ;q=abc}): the header only states a preference, and
 * the routes that ignore it answer such a request normally too.
 */
final class Negotiation {

    private Negotiation() {}

    static MediaType choose(ServerRequest req, MediaType byDefault, MediaType other) {
        try {
            return req.headers().bestAccepted(byDefault, other).orElse(byDefault);
        } catch (BadRequestException | IllegalArgumentException unparseable) {
            return byDefault;
        }
    }
}

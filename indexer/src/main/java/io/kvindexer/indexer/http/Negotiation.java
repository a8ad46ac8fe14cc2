package io.kvindexer.indexer.http;

import io.helidon.common.media.type.MediaType;
import io.helidon.http.BadRequestException;
import io.helidon.http.HeaderNames;
import io.helidon.http.HttpMediaType;
import io.helidon.webserver.http.ServerRequest;
import java.util.List;

/**
 * The media type of an answer that comes in two, chosen from the request's {@code Accept} as RFC 9110 section
 * 12.5.1 says: each type takes the q-value of the most specific range that matches it ({@code application/json}
 * before {@code application/*} before {@code *}{@code /*}), so {@code application/json;q=0, *}{@code /*} refuses
 * JSON and takes anything else, and the type of highest q-value wins; the route's default wins a tie. An
 * {@code Accept} that refuses the default type (a range that matches it has q=0) and does not take the other is a
 * 406 with the API's JSON error. One that merely does not name either ({@code text/html}) gets the default, as
 * Dynamo's indexer answers JSON whatever the {@code Accept}: a client written against it must not break. Without
 * {@code Accept}, or with one that is no list of media types ({@code text}, {@code ;q=abc}), the default: such a
 * header states no preference we can read, and the routes that ignore it answer such a request normally too.
 * (Helidon's {@code bestAccepted} takes the first range that matches, whatever its specificity, and treats q=0 as
 * "no match" rather than "refused", so it is not used.)
 */
final class Negotiation {

    private Negotiation() {}

    static MediaType choose(ServerRequest req, MediaType byDefault, MediaType other) {
        double defaultQ;
        double otherQ;
        try {
            List<HttpMediaType> ranges = req.headers().acceptedTypes();
            if (ranges.isEmpty()) {
                return byDefault; // no Accept (or an empty one): anything goes
            }
            defaultQ = quality(ranges, byDefault);
            otherQ = quality(ranges, other);
            if (defaultQ < 0 && otherQ <= 0) {
                return byDefault; // neither named: no preference against the default
            }
        } catch (BadRequestException | IllegalArgumentException unparseable) {
            return byDefault;
        }
        if (defaultQ <= 0 && otherQ <= 0) {
            String accept =
                    ApiError.quoted(req.headers().first(HeaderNames.ACCEPT).orElse(""));
            throw new ApiError(
                    406,
                    "`Accept: " + accept + "` takes neither " + byDefault.text() + " nor " + other.text()
                            + ", the types this route answers in");
        }
        return otherQ > defaultQ ? other : byDefault;
    }

    /**
     * The q-value of {@code type}: that of the most specific range matching it (the highest among equals), or -1 when
     * no range matches it.
     */
    private static double quality(List<HttpMediaType> ranges, MediaType type) {
        int best = -1;
        double q = -1;
        for (HttpMediaType range : ranges) {
            double rangeQ = range.qualityFactor(); // of every range: one that is no number makes the header unreadable
            MediaType m = range.mediaType();
            int specificity = m.isWildcardType() ? 0 : m.isWildcardSubtype() ? 1 : 2;
            if ((specificity > best || specificity == best && rangeQ > q) && range.test(type)) {
                best = specificity;
                q = rangeQ;
            }
        }
        return q;
    }
}

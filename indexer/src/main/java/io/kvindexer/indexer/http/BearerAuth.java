package io.kvindexer.indexer.http;

import io.helidon.http.HeaderNames;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;
import io.kvindexer.indexer.common.BearerTokens;
import java.util.Set;

/**
 * Optional bearer-token check on the endpoints that change state or expose the whole index (those declared
 * {@link Routes.Access#TOKEN} in the route table). Read-only endpoints (queries, {@code /workers},
 * {@code /peers}, health, readiness, metrics) stay open: a router must keep querying without a secret. The
 * comparison is constant-time so the token cannot be guessed byte by byte; during a rotation the previous token
 * is accepted too, for the grace period ({@link BearerTokens}). A refusal names what was wrong (no header, another
 * scheme, the scheme without a token, a token not accepted) and carries the RFC 6750 challenge.
 */
final class BearerAuth implements Filter {

    private final BearerTokens tokens;
    private final Routes routes;
    private final Set<String> protectedPaths;

    BearerAuth(BearerTokens tokens, Routes routes) {
        this.tokens = tokens;
        this.routes = routes;
        this.protectedPaths = routes.protectedPaths();
    }

    @Override
    public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        if (!protectedPaths.contains(routes.pathOf(req.prologue().uriPath().path()))) {
            chain.proceed();
            return;
        }
        String given = req.headers().first(HeaderNames.AUTHORIZATION).orElse("");
        String token = bearerToken(given);
        if (token != null && tokens.accepts(token)) {
            chain.proceed();
            return;
        }
        if (given.isEmpty()) {
            refuse(req, res, "Bearer", "missing `Authorization: Bearer <token>` header");
        } else if (token != null && token.isEmpty()) {
            // what `-H "Authorization: Bearer $TOKEN"` sends with TOKEN unset: the scheme is right, the token missing
            refuse(req, res, "Bearer", "the Authorization header has the Bearer scheme but no token after it");
        } else if (token == null) {
            refuse(
                    req,
                    res,
                    "Bearer",
                    "the Authorization header must use the Bearer scheme: `Authorization: Bearer <token>`");
        } else {
            // RFC 6750 section 3.1: a token that was presented but is not accepted
            refuse(req, res, "Bearer error=\"invalid_token\"", "invalid bearer token");
        }
    }

    /**
     * The token of an {@code Authorization} header in the Bearer scheme ("" for the scheme alone: a header's
     * trailing spaces are not part of its value), else null. RFC 9110 section 11: the scheme is case-insensitive
     * and one or more spaces come before the credentials.
     */
    static String bearerToken(String authorization) {
        int space = authorization.indexOf(' ');
        String scheme = space < 0 ? authorization : authorization.substring(0, space);
        if (!scheme.equalsIgnoreCase("Bearer")) {
            return null;
        }
        return space < 0 ? "" : authorization.substring(space).strip();
    }

    private static void refuse(RoutingRequest req, RoutingResponse res, String challenge, String error) {
        res.header(HeaderNames.WWW_AUTHENTICATE, challenge);
        JsonOut.error(HeadResponse.of(req, res), 401, error);
    }
}

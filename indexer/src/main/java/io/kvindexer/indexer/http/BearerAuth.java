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
 * is accepted too, for the grace period ({@link BearerTokens}).
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
        if (tokens.accepts(given)) {
            chain.proceed();
            return;
        }
        res.header(HeaderNames.WWW_AUTHENTICATE, "Bearer");
        JsonOut.error(
                res, 401, given.isEmpty() ? "missing `Authorization: Bearer <token>` header" : "invalid bearer token");
    }
}

package io.kvindexer.indexer.http;

import io.helidon.http.Method;
import io.helidon.http.Status;
import io.helidon.webserver.http.Handler;
import io.helidon.webserver.http.HttpRouting;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The route table of the API: every service adds its endpoints here, one line each (method, path, whether the
 * bearer token is needed, handler). Everything else that depends on the set of routes derives from this table:
 * the handlers and the 405 answers mounted on the routing, the {@code endpoint} label of the request metrics and
 * the paths {@link BearerAuth} protects. A path may end in {@code /*} to cover everything below it.
 */
public final class Routes {

    /** Whether an endpoint needs {@code Authorization: Bearer <token>} when the server has a token. */
    public enum Access { OPEN, TOKEN }

    /** One endpoint. */
    public record Route(Method method, String path, Access access, Handler handler) {
    }

    private final List<Route> routes = new ArrayList<>();

    Routes() {
    }

    /** Builds the table from the services, in order. */
    static Routes of(List<? extends ApiService> services) {
        Routes table = new Routes();
        for (ApiService s : services) {
            s.routes(table);
        }
        return table;
    }

    public Routes get(String path, Access access, Handler handler) {
        return add(Method.GET, path, access, handler);
    }

    public Routes post(String path, Access access, Handler handler) {
        return add(Method.POST, path, access, handler);
    }

    public Routes add(Method method, String path, Access access, Handler handler) {
        for (Route r : routes) {
            if (r.method().equals(method) && r.path().equals(path)) {
                throw new IllegalStateException(method.text() + " " + path + " is declared twice");
            }
        }
        routes.add(new Route(method, path, access, handler));
        return this;
    }

    /** Every endpoint, in declaration order. */
    public List<Route> all() {
        return List.copyOf(routes);
    }

    /** The distinct paths, in declaration order. */
    public Set<String> paths() {
        Set<String> paths = new LinkedHashSet<>();
        routes.forEach(r -> paths.add(r.path()));
        return paths;
    }

    /** The paths that need the token (for any method: a protected path answers 401 before 405). */
    Set<String> protectedPaths() {
        Set<String> paths = new LinkedHashSet<>();
        routes.stream().filter(r -> r.access() == Access.TOKEN).forEach(r -> paths.add(r.path()));
        return paths;
    }

    /** The declared path a request path falls under, or null: the metrics label and the bearer check use it. */
    String pathOf(String requestPath) {
        for (Route r : routes) {
            if (matches(r.path(), requestPath)) {
                return r.path();
            }
        }
        return null;
    }

    static boolean matches(String declared, String requestPath) {
        if (declared.endsWith("/*")) {
            String prefix = declared.substring(0, declared.length() - 1);
            return requestPath.startsWith(prefix) || requestPath.equals(prefix.substring(0, prefix.length() - 1));
        }
        return declared.equals(requestPath);
    }

    /** Mounts the handlers, then 405 for another method on a known path, then 404 for anything else. */
    void mount(HttpRouting.Builder routing) {
        for (Route r : routes) {
            routing.route(r.method(), r.path(), r.handler());
        }
        for (String p : paths()) {
            routing.any(p, (req, res) -> res.status(Status.METHOD_NOT_ALLOWED_405).send());
        }
        routing.any((req, res) -> res.status(Status.NOT_FOUND_404).send());
    }
}

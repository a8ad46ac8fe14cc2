package io.kvindexer.indexer.http;

import io.helidon.http.HeaderNames;
import io.helidon.http.Method;
import io.helidon.http.Status;
import io.helidon.webserver.http.Handler;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The route table of the API: every service adds its endpoints here, one line each (method, path, whether the
 * bearer token is needed, handler). Everything else that depends on the set of routes derives from this table:
 * the handlers (a GET's also for HEAD, {@link HeadResponse}) and the 405 answers mounted on the routing, the
 * {@code endpoint} label of the request metrics and the paths {@link BearerAuth} protects, and (for the API routes,
 * not the console's pages) the OpenAPI document's path list. A path may end in {@code /*} to cover everything below
 * it, and a segment may be a Helidon parameter ({@code /ui/{file}}).
 */
public final class Routes {

    /** Whether an endpoint needs {@code Authorization: Bearer <token>} when the server has a token. */
    public enum Access {
        OPEN,
        TOKEN
    }

    /**
     * One endpoint.
     *
     * @param api false for the web console's pages: open, GET only, and not part of the OpenAPI document
     */
    public record Route(Method method, String path, Access access, Handler handler, boolean api) {}

    private final List<Route> routes = new ArrayList<>();

    Routes() {}

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
        return add(new Route(method, path, access, handler, true));
    }

    /** A page of the web console: GET, open, outside the API document. */
    public Routes page(String path, Handler handler) {
        return add(new Route(Method.GET, path, Access.OPEN, handler, false));
    }

    private Routes add(Route route) {
        Method method = route.method();
        String path = route.path();
        for (Route r : routes) {
            if (r.method().equals(method) && r.path().equals(path)) {
                throw new IllegalStateException(method.text() + " " + path + " is declared twice");
            }
        }
        routes.add(route);
        return this;
    }

    /** Every endpoint, in declaration order. */
    public List<Route> all() {
        return List.copyOf(routes);
    }

    /** The API's endpoints (what the OpenAPI document lists), in declaration order. */
    public List<Route> api() {
        return routes.stream().filter(Route::api).toList();
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
        if (!declared.contains("{")) {
            return declared.equals(requestPath);
        }
        String[] want = declared.split("/", -1);
        String[] got = requestPath.split("/", -1);
        if (want.length != got.length) {
            return false;
        }
        for (int i = 0; i < want.length; i++) {
            boolean parameter = want[i].startsWith("{") && want[i].endsWith("}");
            if (parameter ? got[i].isEmpty() : !want[i].equals(got[i])) {
                return false;
            }
        }
        return true;
    }

    /**
     * The methods declared for a path, in declaration order, HEAD after GET (the {@code Allow} header of its 405).
     */
    String allowed(String path) {
        Set<String> methods = new LinkedHashSet<>();
        for (Route r : routes) {
            if (r.path().equals(path)) {
                methods.add(r.method().text());
                if (r.method().equals(Method.GET)) {
                    methods.add(Method.HEAD.text());
                }
            }
        }
        return String.join(", ", methods);
    }

    /**
     * Mounts the handlers (each GET's for HEAD too: RFC 9110 section 9.1 wants HEAD wherever GET is, and load
     * balancers and {@code curl -I} probe with it), then 405 for another method on a known path (with {@code Allow},
     * as RFC 9110 asks and Dynamo's axum router sends), then 404 for anything else; both with a JSON body that names
     * the problem. {@code OPTIONS *} is the server's own: 200 with the methods it takes in {@code Allow}.
     */
    void mount(HttpRouting.Builder routing) {
        for (Route r : routes) {
            routing.route(r.method(), r.path(), r.handler());
            if (r.method().equals(Method.GET)) {
                routing.route(Method.HEAD, r.path(), HeadResponse.of(r.handler()));
            }
        }
        for (String p : paths()) {
            String allow = allowed(p);
            routing.any(p, (req, res) -> {
                res.header(HeaderNames.ALLOW, allow);
                refuse(
                        req,
                        res,
                        Status.METHOD_NOT_ALLOWED_405,
                        req.prologue().method().text() + " is not allowed on "
                                + req.path().path() + "; allowed: " + allow);
            });
        }
        String serverAllow = serverAllowed();
        routing.any((req, res) -> {
            if (req.prologue().method().equals(Method.OPTIONS)
                    && req.path().path().equals("*")) {
                // RFC 9110 section 9.3.7: OPTIONS * asks about the server itself (a proxy's or a client's
                // capability probe), not about a route: what it takes, and no content (Content-Length: 0)
                res.header(HeaderNames.ALLOW, serverAllow);
                res.send();
                return;
            }
            refuse(
                    req,
                    res,
                    Status.NOT_FOUND_404,
                    "no endpoint at " + req.path().path() + " (GET /openapi.yaml lists them)");
        });
    }

    /** The methods some route takes, HEAD after GET, then OPTIONS (which {@code OPTIONS *} answers): its Allow. */
    private String serverAllowed() {
        Set<String> methods = new LinkedHashSet<>();
        for (Route r : routes) {
            methods.add(r.method().text());
            if (r.method().equals(Method.GET)) {
                methods.add(Method.HEAD.text());
            }
        }
        methods.add(Method.OPTIONS.text());
        return String.join(", ", methods);
    }

    /** A JSON error (for HEAD, its headers only). */
    private static void refuse(ServerRequest req, ServerResponse res, Status status, String message) {
        JsonOut.error(HeadResponse.of(req, res), status.code(), message);
    }
}

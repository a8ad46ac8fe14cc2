package io.kvindexer.indexer.http;

import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * The web console: {@code /ui/} and its static files, read from the jar ({@code /ui/*} resources), so it works
 * without network access. {@code /ui} redirects to {@code ui/} (relative, its query kept). The files hold no data (the page reads the JSON
 * API), so they are public even when bearer-token auth is on.
 */
final class ConsoleService implements ApiService {

    static final String ROOT = "/ui/";
    /** flat names only: nothing outside {@code /ui/} in the class path can be named */
    private static final Pattern FILE = Pattern.compile("[a-z0-9][a-z0-9-]*\\.(html|js|css|svg)");

    private static final Map<String, String> TYPES = Map.of(
            "html", "text/html; charset=utf-8",
            "js", "text/javascript; charset=utf-8",
            "css", "text/css; charset=utf-8",
            "svg", "image/svg+xml");
    /** scripts and styles from this origin only; the page talks to this server only */
    private static final String CSP = "default-src 'self'; img-src 'self' data:; object-src 'none'; "
            + "base-uri 'none'; frame-ancestors 'none'; form-action 'none'";

    private final Map<String, Optional<byte[]>> files = new ConcurrentHashMap<>();

    @Override
    public void routes(Routes routes) {
        routes.page("/ui", (req, res) -> {
                    // relative: behind a proxy that mounts the indexer under /a/, /a/ui goes to /a/ui/ (an absolute
                    // /ui/ left the prefix); the query (?refresh=) is the page's, kept
                    String query = req.query().rawValue();
                    res.status(Status.MOVED_PERMANENTLY_301);
                    res.header(HeaderNames.LOCATION, "ui/" + (query.isEmpty() ? "" : "?" + query));
                    res.send();
                })
                .page(ROOT, (req, res) -> serve(res, "index.html"))
                .page(
                        ROOT + "{file}",
                        (req, res) -> serve(res, req.path().pathParameters().get("file")));
    }

    private void serve(ServerResponse res, String name) {
        Optional<byte[]> body =
                FILE.matcher(name).matches() ? files.computeIfAbsent(name, ConsoleService::load) : Optional.empty();
        if (body.isEmpty()) {
            JsonOut.error(res, Status.NOT_FOUND_404.code(), "the console has no file " + name);
            return;
        }
        res.header(HeaderNames.CONTENT_TYPE, TYPES.get(name.substring(name.lastIndexOf('.') + 1)));
        // revalidate each load: a new indexer version must not run an old cached script
        res.header(HeaderNames.CACHE_CONTROL, "no-cache");
        res.header(HeaderNames.X_CONTENT_TYPE_OPTIONS, "nosniff");
        res.header(HeaderNames.create("Content-Security-Policy"), CSP);
        res.send(body.get());
    }

    private static Optional<byte[]> load(String name) {
        try (InputStream in = ConsoleService.class.getResourceAsStream(ROOT + name)) {
            return in == null ? Optional.empty() : Optional.of(in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

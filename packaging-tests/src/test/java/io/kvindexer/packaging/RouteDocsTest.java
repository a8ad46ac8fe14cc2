package io.kvindexer.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerCli;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.IndexerCore;
import io.kvindexer.indexer.http.IndexerRouting;
import io.kvindexer.indexer.http.Routes;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;

/**
 * What the docs and {@code --help} say about routes, against the program: the routes that need the bearer token are
 * those the route table declares {@link Routes.Access#TOKEN} (with the gated {@code /test/*} routes mounted), and the
 * routes under {@code --max-query-body-bytes} are those that answer 413 above it. RouteTableTest keeps the OpenAPI
 * document in step; this keeps the Markdown docs and the usage text.
 */
class RouteDocsTest {

    /** A route as the docs write it: {@code /dump}, {@code /test/*}; not a flag, a file path or a URL. */
    private static final Pattern PATH = Pattern.compile("(?<![\\w.:/-])(/[a-z_]+(?:/(?:[a-z_]+|\\*))*)");

    @Test
    void theTokenRoutesAreNamedWhereverTheTokenIsDescribed() throws Exception {
        Set<String> paths;
        Set<String> protectedPaths = new TreeSet<>();
        try (IndexerCore indexer = IndexerCore.start(IndexerConfig.defaults().with(c -> c.testEndpoints = true))) {
            Routes routes = IndexerRouting.routes(indexer.components());
            paths = routes.paths();
            routes.all().stream()
                    .filter(r -> r.access() == Routes.Access.TOKEN)
                    .forEach(r -> protectedPaths.add(r.path()));
        }
        assertThat(protectedPaths).contains("/dump", "/reopen_logs", "/test/pause_listener");
        Map<String, String> texts = Map.of(
                "security.md, control side", row("docs/security.md", "| HTTP control side"),
                "configuration.md, --auth-token-file", row("docs/configuration.md", "| `--auth-token-file`"),
                "the authentication paragraph of api.md", paragraph("docs/api.md", "Authentication"),
                "--help, --auth-token-file", optionHelp("--auth-token-file"));
        SoftAssertions.assertSoftly(soft -> texts.forEach((where, text) ->
                soft.assertThat(covered(named(text), paths)).as(where).isEqualTo(protectedPaths)));
    }

    @Test
    void theQueryBodyLimitNamesTheRoutesItLimits() throws Exception {
        IndexerConfig config = IndexerConfig.defaults().with(c -> {
            c.testEndpoints = true;
            c.maxQueryBodyBytes = 64;
            c.maxBodyBytes = 1 << 20;
        });
        List<Routes.Route> posts;
        try (IndexerCore indexer = IndexerCore.start(config)) {
            posts = IndexerRouting.routes(indexer.components()).api().stream()
                    .filter(r -> r.method().text().equals("POST"))
                    .toList();
        }
        Set<String> limited = new TreeSet<>();
        String body = "{\"model_name\":\"m\",\"pad\":\"" + "x".repeat(256) + "\"}";
        try (IndexerApp app = IndexerApp.start(config);
                HttpClient http = HttpClient.newHttpClient()) {
            for (Routes.Route r : posts) {
                HttpResponse<String> answer = http.send(
                        HttpRequest.newBuilder(URI.create(app.baseUrl() + r.path()))
                                .header("Content-Type", "application/json")
                                .POST(HttpRequest.BodyPublishers.ofString(body))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                if (answer.statusCode() == 413) {
                    limited.add(r.path());
                }
            }
        }
        assertThat(limited).contains("/query");
        assertThat(named(optionHelp("--max-query-body-bytes"))).as("--help").isEqualTo(limited);
        assertThat(named(row("docs/configuration.md", "| `--max-query-body-bytes`")))
                .as("configuration.md")
                .isEqualTo(limited);
    }

    /** The table row of a doc that starts with {@code start}. */
    private static String row(String doc, String start) {
        List<String> rows = RepoFiles.read(RepoFiles.root().resolve(doc))
                .lines()
                .filter(l -> l.startsWith(start))
                .toList();
        assertThat(rows).as("row %s in %s", start, doc).hasSize(1);
        return rows.get(0);
    }

    /** The paragraph of a doc that starts with {@code start}. */
    private static String paragraph(String doc, String start) {
        String text = RepoFiles.read(RepoFiles.root().resolve(doc));
        int from = text.indexOf("\n" + start);
        assertThat(from).as("paragraph %s in %s", start, doc).isNotNegative();
        int to = text.indexOf("\n\n", from + 1);
        return text.substring(from, to < 0 ? text.length() : to);
    }

    /** The description of {@code flag} in {@code --help}: its option line and the indented lines after it. */
    private static String optionHelp(String flag) throws Exception {
        String help = IndexerCli.parse(new String[] {"--help"}, Map.of()).helpText();
        StringBuilder out = new StringBuilder();
        boolean in = false;
        for (String line : help.lines().toList()) {
            String s = line.strip();
            if (s.startsWith("-")) {
                in = s.startsWith(flag + "=") || s.startsWith(flag + " ");
            } else if (s.isEmpty()) {
                in = false;
            }
            if (in) {
                out.append(s).append(' ');
            }
        }
        assertThat(out).as("--help of %s", flag).isNotEmpty();
        return out.toString();
    }

    private static Set<String> named(String text) {
        Set<String> out = new TreeSet<>();
        Matcher m = PATH.matcher(text);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    /** The declared paths that the names cover ({@code /test/*} covers every path below {@code /test/}). */
    private static Set<String> covered(Set<String> names, Set<String> paths) {
        Set<String> out = new TreeSet<>();
        for (String name : names) {
            List<String> under = paths.stream()
                    .filter(p ->
                            name.endsWith("/*") ? p.startsWith(name.substring(0, name.length() - 1)) : p.equals(name))
                    .toList();
            assertThat(under).as("%s names a route", name).isNotEmpty();
            out.addAll(under);
        }
        return out;
    }
}

package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.IndexerCore;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The route table against the OpenAPI document the server ships: the same (method, path) pairs, and the token
 * protects exactly the routes the document's authentication paragraph names. What serves the routes is tested
 * elsewhere; this keeps the table and the document from drifting apart.
 */
class RouteTableTest {

    private static final Pattern PATH = Pattern.compile("^  (/\\S*):\\s*$");
    private static final Pattern OPERATION = Pattern.compile("^    (get|post|put|patch|delete):\\s*$");

    @Test
    void tableAndOpenApiDocumentListTheSameRoutes() throws Exception {
        try (IndexerCore indexer = IndexerCore.start(IndexerConfig.defaults().with(c -> c.testEndpoints = true))) {
            Routes routes = IndexerRouting.routes(indexer.components());
            Set<String> declared = new TreeSet<>();
            routes.api().forEach(r -> declared.add(r.method().text() + " " + r.path()));
            assertThat(declared).isEqualTo(documented(document()));
        }
    }

    @Test
    void tokenProtectsWhatTheDocumentSays() throws Exception {
        String doc = document();
        int from = doc.indexOf("Authentication");
        String paragraph = doc.substring(from, doc.indexOf("\n\n", from));
        Matcher m = Pattern.compile("`(/[^`]*)`").matcher(paragraph);
        Set<String> named = new TreeSet<>();
        while (m.find()) {
            named.add(m.group(1));
        }
        try (IndexerCore indexer = IndexerCore.start(IndexerConfig.defaults().with(c -> c.testEndpoints = true))) {
            Routes routes = IndexerRouting.routes(indexer.components());
            Set<String> expected = new TreeSet<>();
            for (String path : routes.paths()) {
                if (named.stream().anyMatch(n -> Routes.matches(n, path))) {
                    expected.add(path);
                }
            }
            assertThat(named).isNotEmpty();
            assertThat(new TreeSet<>(routes.protectedPaths())).isEqualTo(expected);
        }
    }

    @Test
    void testRoutesAreOnlyInTheTableWhenEnabled() throws Exception {
        try (IndexerCore indexer = IndexerCore.start(IndexerConfig.defaults())) {
            Routes routes = IndexerRouting.routes(indexer.components());
            assertThat(routes.paths()).contains("/query").noneMatch(p -> p.startsWith("/test/"));
            assertThat(routes.pathOf("/test/pause_listener")).isNull();
        }
    }

    @Test
    void aPathIsDeclaredOncePerMethodAndPrefixesCoverWhatIsBelow() {
        Routes routes = new Routes()
                .get("/ui/*", Routes.Access.OPEN, (req, res) -> res.send())
                .post("/query", Routes.Access.OPEN, (req, res) -> res.send());
        assertThatThrownBy(() -> routes.post("/query", Routes.Access.TOKEN, (req, res) -> res.send()))
                .hasMessageContaining("POST /query is declared twice");
        assertThat(routes.pathOf("/ui/")).isEqualTo("/ui/*");
        assertThat(routes.pathOf("/ui/app.js")).isEqualTo("/ui/*");
        assertThat(routes.pathOf("/ui")).isEqualTo("/ui/*");
        assertThat(routes.pathOf("/uix")).isNull();
        assertThat(routes.pathOf("/query")).isEqualTo("/query");
        assertThat(routes.pathOf("/query/")).isNull();
    }

    private static Set<String> documented(String doc) {
        Set<String> out = new TreeSet<>();
        String path = null;
        for (String line : doc.split("\n")) {
            Matcher p = PATH.matcher(line);
            if (p.matches()) {
                path = p.group(1);
                continue;
            }
            if (!line.startsWith(" ")) {
                path = null; // a top-level key ends the paths section
            }
            Matcher o = OPERATION.matcher(line);
            if (path != null && o.matches()) {
                out.add(o.group(1).toUpperCase() + " " + path);
            }
        }
        return out;
    }

    private static String document() throws IOException {
        try (InputStream in = RouteTableTest.class.getResourceAsStream(OpenApiService.RESOURCE)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}

package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

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
 * The console sends the bearer token to exactly the routes that need it: its PROTECTED set (ui/api.js) is the route
 * table's token routes. A route missing there is answered 401 without the console ever asking for the token.
 */
class ConsoleTokenRoutesTest {

    private static final Pattern PROTECTED = Pattern.compile("const PROTECTED = new Set\\(\\[([^\\]]*)]\\)");

    @Test
    void theConsoleProtectsExactlyTheTokenRoutes() throws Exception {
        Matcher m = PROTECTED.matcher(resource("api.js"));
        assertThat(m.find()).as("the PROTECTED set in api.js").isTrue();
        Set<String> console = new TreeSet<>();
        Matcher path = Pattern.compile("'(/[^']*)'").matcher(m.group(1));
        while (path.find()) {
            console.add(path.group(1));
        }
        // without DYN_KV_INDEXER_TEST_ENDPOINTS: the console never calls /test/*
        try (IndexerCore indexer = IndexerCore.start(IndexerConfig.defaults())) {
            Routes routes = IndexerRouting.routes(indexer.components());
            assertThat(console).isEqualTo(new TreeSet<>(routes.protectedPaths()));
        }
    }

    private static String resource(String name) throws IOException {
        try (InputStream in = ConsoleTokenRoutesTest.class.getResourceAsStream("/ui/" + name)) {
            assertThat(in).as(name).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}

package io.kvindexer.packaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.Error;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerCli;
import io.kvindexer.indexer.dump.BinaryDump;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The OpenAPI document (indexer/src/main/resources/openapi.yaml) against a real running indexer (IndexerApp on a
 * loopback port): every documented route exists; every request example, sent in document order, gets its
 * {@code x-expected-status}, which must be a documented response of the operation; and JSON bodies validate
 * against the documented response schema (networknt, JSON Schema 2020-12 as OpenAPI 3.1 uses).
 */
class OpenApiRoutesTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    private static IndexerApp app;
    private static HttpClient http;
    private static JsonNode document;
    private static String documentText;

    @BeforeAll
    static void start() throws Exception {
        documentText = RepoFiles.read(RepoFiles.root().resolve("indexer/src/main/resources/openapi.yaml"));
        document = CrdSchemas.YAML.readTree(documentText);
        // the gated /test/* routes are documented too, so mount them
        var parsed = IndexerCli.parse(
                new String[] {"--port", "0", "--host", "127.0.0.1"}, Map.of("DYN_KV_INDEXER_TEST_ENDPOINTS", "1"));
        app = IndexerApp.start(parsed.config());
        http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        await().atMost(Duration.ofSeconds(60))
                .untilAsserted(
                        () -> assertThat(send("GET", "/ready", null, null).statusCode())
                                .isEqualTo(200));
    }

    @AfterAll
    static void stop() {
        if (http != null) {
            http.close();
        }
        if (app != null) {
            app.close();
        }
    }

    @Test
    void everyDocumentedExampleGetsItsDocumentedStatusAndBody() throws Exception {
        List<String> checked = new ArrayList<>();
        for (var path : document.get("paths").properties()) {
            for (var operation : path.getValue().properties()) {
                String method = operation.getKey().toUpperCase();
                JsonNode op = operation.getValue();
                if (method.equals("GET")) {
                    int expected = op.path("x-expected-status").asInt(200);
                    checkAnswer(path.getKey(), method, op, send(method, path.getKey(), null, null), expected, "GET");
                    checked.add(method + " " + path.getKey());
                } else {
                    JsonNode examples = op.at("/requestBody/content/application~1json/examples");
                    assertThat(examples.isEmpty())
                            .as("%s %s documents request examples", method, path.getKey())
                            .isFalse();
                    for (var example : examples.properties()) {
                        JsonNode ex = example.getValue();
                        assertThat(ex.has("x-expected-status"))
                                .as("example %s of %s", example.getKey(), path.getKey())
                                .isTrue();
                        String body = JSON.writeValueAsString(ex.get("value"));
                        HttpResponse<String> response = send(method, path.getKey(), body, "application/json");
                        checkAnswer(
                                path.getKey(),
                                method,
                                op,
                                response,
                                ex.get("x-expected-status").asInt(),
                                example.getKey());
                        checked.add(method + " " + path.getKey() + " " + example.getKey());
                    }
                }
            }
        }
        assertThat(checked).hasSizeGreaterThan(20);
    }

    @Test
    void everyDocumentedRouteExistsAndRefusesOtherMethodsWith405() throws Exception {
        for (var path : document.get("paths").properties()) {
            String other = path.getValue().has("get") ? "POST" : "GET";
            HttpResponse<String> response = send(
                    other,
                    path.getKey(),
                    other.equals("POST") ? "{}" : null,
                    other.equals("POST") ? "application/json" : null);
            assertThat(response.statusCode())
                    .as("%s %s (a known path with another method)", other, path.getKey())
                    .isEqualTo(405);
        }
        assertThat(send("GET", "/no/such/route", null, null).statusCode()).isEqualTo(404);
    }

    @Test
    void everyJsonPostRefusesAnotherContentTypeAsDocumented() throws Exception {
        for (var path : document.get("paths").properties()) {
            JsonNode post = path.getValue().get("post");
            if (post == null || !post.path("responses").has("415")) {
                continue;
            }
            HttpResponse<String> response = send("POST", path.getKey(), "{}", "text/plain");
            checkAnswer(path.getKey(), "POST", post, response, 415, "text/plain body");
        }
    }

    /**
     * {@code GET /dump} documents every query flag its service reads and every binary version it writes (version 5
     * and {@code cache_salts} were missing once).
     */
    @Test
    void theDumpDocumentsEveryFlagAndBinaryVersionTheServerKnows() {
        JsonNode dump = document.at("/paths/~1dump/get");
        List<String> documented = new ArrayList<>();
        dump.get("parameters").forEach(p -> documented.add(p.get("name").asText()));
        String service = RepoFiles.read(
                RepoFiles.root().resolve("indexer/src/main/java/io/kvindexer/indexer/http/DumpService.java"));
        Matcher flag =
                Pattern.compile("QueryParameters\\.flag\\(query, \"([a-z_]+)\"").matcher(service);
        List<String> read = new ArrayList<>();
        while (flag.find()) {
            read.add(flag.group(1));
        }
        assertThat(read).contains("registrations", "cache_salts", "snapshot_watermarks");
        assertThat(documented).containsAll(read);
        String description = dump.get("description").asText().replaceAll("\\s+", " ");
        for (int v = BinaryDump.VERSION_WITH_REGISTRATIONS; v <= BinaryDump.VERSION_WITH_SNAPSHOT_WATERMARKS; v++) {
            assertThat(description).as("version %d", v).contains("Version " + v + " (binary with `?registrations=true");
        }
    }

    @Test
    void theServerServesThisDocument() throws Exception {
        HttpResponse<String> response = send("GET", "/openapi.yaml", null, null);

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("content-type"))
                .hasValueSatisfying(t -> assertThat(t).contains("yaml"));
        assertThat(response.body()).isEqualTo(documentText);
    }

    // ---- helpers

    private static void checkAnswer(
            String path, String method, JsonNode operation, HttpResponse<String> response, int expected, String example)
            throws IOException {
        String what = method + " " + path + " (" + example + ")";
        assertThat(response.statusCode())
                .as("%s status; body: %s", what, response.body())
                .isEqualTo(expected);
        JsonNode documented = operation.path("responses").path(Integer.toString(expected));
        assertThat(documented.isMissingNode())
                .as("%s: status %d is documented", what, expected)
                .isFalse();
        documented = resolve(documented);
        JsonNode schema = documented.at("/content/application~1json/schema");
        if (!schema.isMissingNode()) {
            assertThat(response.headers().firstValue("content-type"))
                    .as("%s content type", what)
                    .hasValueSatisfying(t -> assertThat(t).startsWith("application/json"));
            ObjectNode full = ((ObjectNode) schema.deepCopy());
            List<String> errors = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12)
                    .getSchema(full)
                    .validate(JSON.readTree(response.body()))
                    .stream()
                    .map(Error::toString)
                    .toList();
            assertThat(errors)
                    .as("%s body %s against the documented schema", what, response.body())
                    .isEmpty();
        }
    }

    /** Replaces every local {@code $ref} ("#/components/...") by a copy of its target, recursively. */
    private static JsonNode resolve(JsonNode node) {
        if (node.isObject() && node.has("$ref")) {
            String ref = node.get("$ref").asText();
            assertThat(ref).startsWith("#/");
            JsonNode target = document.at(ref.substring(1));
            assertThat(target.isMissingNode()).as("target of %s", ref).isFalse();
            return resolve(target);
        }
        if (node.isObject()) {
            ObjectNode copy = JSON.createObjectNode();
            node.properties().forEach(e -> copy.set(e.getKey(), resolve(e.getValue())));
            return copy;
        }
        if (node.isArray()) {
            var copy = JSON.createArrayNode();
            node.forEach(n -> copy.add(resolve(n)));
            return copy;
        }
        return node;
    }

    private static HttpResponse<String> send(String method, String path, String body, String contentType)
            throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(app.baseUrl() + path))
                .timeout(TIMEOUT)
                .method(
                        method,
                        body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (contentType != null) {
            request.header("Content-Type", contentType);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}

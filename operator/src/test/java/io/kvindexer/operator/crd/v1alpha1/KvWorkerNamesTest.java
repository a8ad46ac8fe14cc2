package io.kvindexer.operator.crd.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kvindexer.indexer.registry.Registration;
import io.kvindexer.operator.reconcile.SpecChecks;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A KvWorker's {@code modelName} and {@code tenantId} become the indexer's model and tenant: the committed CRD's
 * schema (what the API server checks; the mock API server checks no schema) and the operator's own check take
 * exactly the non-empty names the indexer takes ({@link Registration#nameProblem}), else a KvWorker the API server
 * accepted would be answered 422 by every replica at each reconcile.
 */
class KvWorkerNamesTest {

    private static final List<String> NAMES = List.of(
            "meta-llama/Llama-3.1-8B-Instruct",
            "a:b c",
            "模型 ü 😀",
            "m".repeat(256),
            "😀".repeat(256), // 512 UTF-16 units, 256 characters: all three count characters
            "m".repeat(257),
            "😀".repeat(257),
            "x".repeat(100_000),
            "line\nbreak",
            "nul\u0000",
            "tab\t",
            "del\u007f",
            "next line\u0085", // a line break to Java's `$`
            "line\n",
            "\u009f",
            "nbsp\u00a0ok");

    @Test
    void theSchemaTakesTheNamesTheIndexerTakes() throws IOException {
        JSONSchemaProps spec = kvWorkerSpecSchema();
        for (String field : List.of("modelName", "tenantId")) {
            JSONSchemaProps schema = spec.getProperties().get(field);
            assertThat(schema.getMaxLength()).as(field).isEqualTo((long) Registration.MAX_NAME);
            assertThat(schema.getPattern()).as(field).isNotNull();
            for (String name : NAMES) {
                assertThat(schemaTakes(schema, name))
                        .as(
                                "%s of %d characters: %s",
                                field, name.length(), name.substring(0, Math.min(20, name.length())))
                        .isEqualTo(Registration.nameProblem(name) == null);
            }
        }
    }

    @Test
    void theOperatorsCheckTakesTheNamesTheIndexerTakes() {
        for (String name : NAMES) {
            String problem = SpecChecks.indexerName("spec.modelName", name, KvWorkerSpec.NAME_MAX);
            assertThat(problem == null)
                    .as("%d characters: %s", name.length(), name.substring(0, Math.min(20, name.length())))
                    .isEqualTo(Registration.nameProblem(name) == null);
            if (problem != null) {
                assertThat(problem).startsWith("spec.modelName must ").hasSizeLessThan(100);
            }
        }
        assertThat(KvWorkerSpec.NAME_MAX).isEqualTo(Registration.MAX_NAME);
    }

    /**
     * As the API server checks a string: its length in characters, then the pattern found in it (Go's MatchString).
     * Go's {@code $} (without the multi-line flag) is the end of the text, which Java writes {@code \z}: Java's
     * {@code $} also matches before a final line break, U+0085 among them.
     */
    private static boolean schemaTakes(JSONSchemaProps schema, String value) {
        long length = value.codePointCount(0, value.length());
        String pattern = schema.getPattern();
        assertThat(pattern)
                .endsWith("$")
                .satisfies(p -> assertThat(p.indexOf('$')).isEqualTo(p.length() - 1));
        String asJava = pattern.substring(0, pattern.length() - 1) + "\\z";
        return length >= schema.getMinLength()
                && length <= schema.getMaxLength()
                && Pattern.compile(asJava).matcher(value).find();
    }

    private static JSONSchemaProps kvWorkerSpecSchema() throws IOException {
        try (InputStream in = Files.newInputStream(Path.of("../crds/kvworkers.kvindexer.io-v1.yml"))) {
            CustomResourceDefinition crd = Serialization.unmarshal(in, CustomResourceDefinition.class);
            return crd.getSpec()
                    .getVersions()
                    .getFirst()
                    .getSchema()
                    .getOpenAPIV3Schema()
                    .getProperties()
                    .get("spec");
        }
    }
}

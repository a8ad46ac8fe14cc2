package io.kvindexer.packaging;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The openAPIV3Schema of every CRD in crds/, as JSON schemas that the networknt validator runs, keyed by
 * "apiVersion/kind" (e.g. "kvindexer.io/v1alpha1/KvWorker").
 *
 * <p>One deliberate tightening: the API server silently prunes fields a structural schema does not declare, so a
 * misspelt field in a manifest is lost without an error. Here every object schema that declares properties and
 * neither preserves unknown fields nor declares additionalProperties gets {@code additionalProperties: false}, so a
 * typo fails the test instead of vanishing on a cluster.
 */
final class CrdSchemas {

    static final YAMLMapper YAML = new YAMLMapper();

    private final Map<String, Schema> byApiVersionAndKind = new HashMap<>();

    private CrdSchemas() {}

    static CrdSchemas load(Path crdDir) {
        CrdSchemas schemas = new CrdSchemas();
        SchemaRegistry registry = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_4);
        try (Stream<Path> files = Files.list(crdDir)) {
            for (Path file : files.filter(
                            f -> f.toString().endsWith(".yml") || f.toString().endsWith(".yaml"))
                    .toList()) {
                JsonNode crd = YAML.readTree(file.toFile());
                String group = crd.at("/spec/group").asText();
                String kind = crd.at("/spec/names/kind").asText();
                for (JsonNode version : crd.at("/spec/versions")) {
                    ObjectNode schema = version.at("/schema/openAPIV3Schema").deepCopy();
                    declareImplicitRootFields(schema);
                    forbidUnknownFields(schema);
                    schemas.byApiVersionAndKind.put(
                            group + "/" + version.get("name").asText() + "/" + kind, registry.getSchema(schema));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return schemas;
    }

    boolean covers(JsonNode manifest) {
        return byApiVersionAndKind.containsKey(key(manifest));
    }

    List<String> kinds() {
        return byApiVersionAndKind.keySet().stream().sorted().toList();
    }

    /** Validation errors as readable strings ("$.spec.zmqPort: must have a maximum value of 65535"). */
    List<String> validate(JsonNode manifest) {
        Schema schema = byApiVersionAndKind.get(key(manifest));
        if (schema == null) {
            throw new IllegalArgumentException("no CRD schema for " + key(manifest) + "; known: " + kinds());
        }
        return schema.validate(manifest).stream().map(Error::toString).toList();
    }

    private static String key(JsonNode manifest) {
        return manifest.path("apiVersion").asText() + "/"
                + manifest.path("kind").asText();
    }

    /** The API server always accepts apiVersion, kind and metadata at the root, declared or not. */
    private static void declareImplicitRootFields(ObjectNode schema) {
        ObjectNode properties =
                schema.has("properties") ? (ObjectNode) schema.get("properties") : schema.putObject("properties");
        if (!properties.has("apiVersion")) {
            properties.putObject("apiVersion").put("type", "string");
        }
        if (!properties.has("kind")) {
            properties.putObject("kind").put("type", "string");
        }
        if (!properties.has("metadata")) {
            properties.putObject("metadata").put("type", "object");
        }
    }

    private static void forbidUnknownFields(JsonNode node) {
        if (node instanceof ObjectNode object) {
            boolean preserves =
                    object.path("x-kubernetes-preserve-unknown-fields").asBoolean(false);
            if (object.has("properties") && !object.has("additionalProperties") && !preserves) {
                object.put("additionalProperties", false);
            }
        }
        node.forEach(CrdSchemas::forbidUnknownFields);
    }
}

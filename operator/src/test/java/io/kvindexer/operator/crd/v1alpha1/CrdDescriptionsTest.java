package io.kvindexer.operator.crd.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kvindexer.operator.common.IndexerSecurity;
import io.kvindexer.operator.support.Resources;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@code kubectl explain kvindexer.spec}, {@code kvindexer.status} and the same of a KvWorker print every field of ours
 * with its description (docs/kubernetes.md, "Custom resources"); the Kubernetes types embedded in them (resources,
 * affinity, NetworkPolicy rules, a label selector, conditions ...) carry their own.
 */
class CrdDescriptionsTest {
    /** The embedded Kubernetes types: their own fields are not ours to describe. */
    private static final Set<String> EMBEDDED = Set.of(
            "spec.resources",
            "spec.podTemplate.tolerations",
            "spec.podTemplate.affinity",
            "spec.podTemplate.securityContext",
            "spec.podTemplate.containerSecurityContext",
            "spec.podTemplate.env",
            "spec.podTemplate.topologySpreadConstraints",
            "spec.networkPolicy.allowFrom",
            "spec.networkPolicy.allowTo",
            "spec.selector",
            "status.conditions");

    @Test
    void everyFieldOfOursHasADescription() throws IOException {
        for (String crd : List.of("kvindexers.kvindexer.io-v1.yml", "kvworkers.kvindexer.io-v1.yml")) {
            JSONSchemaProps root = schema(crd);
            List<String> undescribed = new ArrayList<>();
            for (String top : List.of("spec", "status")) {
                walk(top, root.getProperties().get(top), undescribed);
            }
            assertThat(undescribed)
                    .as("fields of %s without a description", crd)
                    .isEmpty();
        }
    }

    /**
     * Where {@code kubectl explain kvindexer.spec.security.auth} says the token is, for the example's KvIndexer
     * ({@code kv-indexer}) too, whose {@code <name>-auth} is the namespace-wide Secret the operator never writes.
     */
    @Test
    void theTokenSecretExplainNamesIsTheOneTheOperatorWrites() throws IOException {
        String auth = schema("kvindexers.kvindexer.io-v1.yml")
                .getProperties()
                .get("spec")
                .getProperties()
                .get("security")
                .getProperties()
                .get("auth")
                .getDescription();
        assertThat(IndexerSecurity.tokenSecret(Resources.kvIndexer("ns", "idx", 1, 8090)))
                .isEqualTo("idx-auth");
        assertThat(auth)
                .contains("<name>-auth")
                .contains(IndexerSecurity.tokenSecret(Resources.kvIndexer("ns", "kv-indexer", 1, 8090))
                        + " for a KvIndexer named kv-indexer");
    }

    private static void walk(String path, JSONSchemaProps node, List<String> undescribed) {
        if (EMBEDDED.contains(path)) {
            return;
        }
        JSONSchemaProps object = node.getItems() != null && node.getItems().getSchema() != null
                ? node.getItems().getSchema()
                : node;
        for (Map.Entry<String, JSONSchemaProps> field : object.getProperties().entrySet()) {
            String at = path + "." + field.getKey();
            String description = field.getValue().getDescription();
            if (description == null || description.isBlank()) {
                undescribed.add(at);
            }
            walk(at, field.getValue(), undescribed);
        }
    }

    private static JSONSchemaProps schema(String crd) throws IOException {
        try (InputStream in = Files.newInputStream(Path.of("../crds").resolve(crd))) {
            return Serialization.unmarshal(in, CustomResourceDefinition.class)
                    .getSpec()
                    .getVersions()
                    .getFirst()
                    .getSchema()
                    .getOpenAPIV3Schema();
        }
    }
}

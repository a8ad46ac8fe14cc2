package io.kvindexer.packaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.marcnuri.helm.Helm;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code helm upgrade} from an older chart version. With {@code --reuse-values} Helm renders the new templates with
 * the values of the release being upgraded, the older chart's defaults included, so a value this chart added is
 * missing, not defaulted; a value an older chart had and this one dropped is still there. Both must be refused by
 * name before anything renders (a template would otherwise stop on a nil pointer, or render an empty flag that the
 * operator refuses only once it starts).
 */
class ChartUpgradeTest {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    /** Each key of a fixed-keys object of values.yaml, taken out in turn: what values from before it look like. */
    @Test
    void aValueTheReleasesOlderChartLacksIsNamedBeforeAnythingRenders() throws IOException {
        Path chart = RepoFiles.chart();
        ObjectNode values =
                (ObjectNode) YAML.readTree(chart.resolve("values.yaml").toFile());
        ((ObjectNode) values.get("example")).put("enabled", true); // its templates read the most values
        JsonNode schema = JSON.readTree(chart.resolve("values.schema.json").toFile());
        List<List<String>> paths = new ArrayList<>();
        fixedKeys(values, schema, List.of(), paths);
        assertThat(paths).as("the keys checked").hasSizeGreaterThan(50);

        Path older = tmp.resolve("older");
        copy(chart, older);
        for (List<String> path : paths) {
            ObjectNode without = values.deepCopy();
            ObjectNode parent = without;
            for (String key : path.subList(0, path.size() - 1)) {
                parent = (ObjectNode) parent.get(key);
            }
            String key = path.getLast();
            parent.remove(key);
            YAML.writeValue(older.resolve("values.yaml").toFile(), without);

            assertThatThrownBy(() -> new Helm(older)
                            .template()
                            .withName("kvio")
                            .withNamespace("kv-system")
                            .withKubeVersion("1.31.0")
                            .call())
                    .as("values without %s", String.join(".", path))
                    .hasMessageContaining("missing property '" + key + "'")
                    .hasMessageNotContaining("nil pointer");
        }
    }

    /** {@code leaderElection.leaseName} was a value of the first chart version; the lease's name is fixed since. */
    @Test
    void aValueAnOlderChartHadIsRefusedByName() {
        assertThatThrownBy(() -> new Helm(RepoFiles.chart())
                        .template()
                        .withName("kvio")
                        .withNamespace("kv-system")
                        .withKubeVersion("1.31.0")
                        .set("leaderElection.leaseName", "kv-indexer-operator-lease")
                        .call())
                .hasMessageContaining("leaseName");
    }

    /**
     * The paths of the keys values.yaml gives to objects whose schema allows no other key (free-form maps such as
     * {@code podAnnotations} or {@code resources} are the user's to fill or empty).
     */
    private static void fixedKeys(JsonNode values, JsonNode schema, List<String> prefix, List<List<String>> out) {
        if (!values.isObject() || schema == null) {
            return;
        }
        boolean fixed = schema.path("additionalProperties").isBoolean()
                && !schema.path("additionalProperties").asBoolean();
        for (Map.Entry<String, JsonNode> field : values.properties()) {
            List<String> path = new ArrayList<>(prefix);
            path.add(field.getKey());
            if (fixed) {
                out.add(path);
            }
            fixedKeys(field.getValue(), schema.path("properties").get(field.getKey()), path, out);
        }
    }

    private static void copy(Path from, Path to) throws IOException {
        try (var files = Files.walk(from)) {
            for (Path p : files.toList()) {
                Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(p, target);
                }
            }
        }
    }
}

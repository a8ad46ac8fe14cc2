package io.kvindexer.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The alerts we ship ({@code charts/kv-indexer-operator/files/kv-indexer-alerts.yaml}, also the chart's
 * {@code metrics.prometheusRule}) load in Prometheus and fire as their unit
 * tests say ({@code promtool check rules}, {@code promtool test rules}), every alert has such a test, and every
 * metric they read is one of docs/metrics.md.
 */
class PrometheusAlertsTest {

    static final String ALERTS = "charts/kv-indexer-operator/files/kv-indexer-alerts.yaml";
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    @TempDir
    Path dir;

    private static JsonNode rules() throws IOException {
        JsonNode rule = YAML.readTree(RepoFiles.root().resolve(ALERTS).toFile());
        assertThat(rule.path("apiVersion").asText()).isEqualTo("monitoring.coreos.com/v1");
        assertThat(rule.path("kind").asText()).isEqualTo("PrometheusRule");
        return rule.get("spec");
    }

    @Test
    void theRulesLoadAndEveryAlertFiresAsItsUnitTestSays() throws Exception {
        YAML.writeValue(dir.resolve("rules.yaml").toFile(), rules());
        try (var in = PrometheusAlertsTest.class.getResourceAsStream("/prometheus/alerts-test.yaml")) {
            Files.write(dir.resolve("alerts-test.yaml"), in.readAllBytes());
        }
        Promtool.Result check = Promtool.run(dir, "", "check", "rules", "rules.yaml");
        assertThat(check.exit()).as(check.output()).isZero();
        Promtool.Result test = Promtool.run(dir, "", "test", "rules", "alerts-test.yaml");
        assertThat(test.exit()).as(test.output()).isZero();
        assertThat(test.output()).contains("SUCCESS");
    }

    @Test
    void everyAlertHasAUnitTestAndReadsDocumentedMetrics() throws Exception {
        Set<String> alerts = new TreeSet<>();
        Set<String> read = new TreeSet<>();
        for (JsonNode group : rules().get("groups")) {
            for (JsonNode rule : group.get("rules")) {
                alerts.add(rule.get("alert").asText());
                assertThat(rule.at("/labels/severity").asText())
                        .as(rule.get("alert").asText())
                        .isIn("critical", "warning", "info");
                read.addAll(DashboardTest.families(rule.get("expr").asText()));
            }
        }
        JsonNode tests;
        try (var in = PrometheusAlertsTest.class.getResourceAsStream("/prometheus/alerts-test.yaml")) {
            tests = YAML.readTree(in);
        }
        Set<String> tested = new TreeSet<>();
        Set<String> firing = new TreeSet<>();
        for (JsonNode test : tests.get("tests")) {
            for (JsonNode c : test.get("alert_rule_test")) {
                tested.add(c.get("alertname").asText());
                if (!c.get("exp_alerts").isEmpty()) {
                    firing.add(c.get("alertname").asText());
                }
            }
        }
        assertThat(tested).isEqualTo(alerts);
        assertThat(firing).as("every alert is seen firing").isEqualTo(alerts);
        Map<String, String> documented = DashboardTest.documentedMetricTypes();
        assertThat(documented.keySet()).containsAll(read);
    }
}

package io.kvindexer.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * docs/grafana/kv-indexer-dashboard.json is a well-formed Grafana dashboard whose queries use exactly the metrics of
 * the documented metrics table (docs/metrics.md), and nothing else.
 */
class DashboardTest {

    static final String DASHBOARD = "docs/grafana/kv-indexer-dashboard.json";
    static final String METRICS_DOC = "docs/metrics.md";
    private static final Pattern METRIC = Pattern.compile("\\b((?:dynamo|kvindexer|jvm|process)_[a-z0-9_]+)\\b");
    private static final Pattern CODE = Pattern.compile("`([^`]+)`");

    private static JsonNode dashboard;

    @BeforeAll
    static void load() throws IOException {
        dashboard =
                new ObjectMapper().readTree(RepoFiles.root().resolve(DASHBOARD).toFile());
    }

    @Test
    void panelsAreWellFormed() {
        List<JsonNode> panels = new ArrayList<>();
        dashboard.get("panels").forEach(panels::add);
        assertThat(panels).hasSizeGreaterThan(10);
        Set<Integer> ids = new HashSet<>();
        for (JsonNode panel : panels) {
            String title = panel.path("title").asText();
            assertThat(ids.add(panel.get("id").asInt()))
                    .as("unique id of %s", title)
                    .isTrue();
            JsonNode grid = panel.get("gridPos");
            assertThat(grid.get("x").asInt() + grid.get("w").asInt())
                    .as("width of %s", title)
                    .isLessThanOrEqualTo(24);
            if (panel.get("type").asText().equals("row")) {
                continue;
            }
            assertThat(panel.at("/datasource/uid").asText())
                    .as("datasource of %s", title)
                    .isEqualTo("${datasource}");
            assertThat(panel.get("targets")).as("targets of %s", title).isNotEmpty();
            panel.get("targets")
                    .forEach(t -> assertThat(t.path("expr").asText())
                            .as("expr in %s", title)
                            .isNotBlank());
        }
        List<String> variables = new ArrayList<>();
        dashboard
                .at("/templating/list")
                .forEach(v -> variables.add(v.get("name").asText()));
        assertThat(variables).contains("datasource", "namespace", "pod");
    }

    /**
     * A panel's description (Grafana's hover text) names every metric the panel charts, so that what a panel shows is
     * found in docs/metrics.md under its name; a title alone had told two different counters apart wrongly
     * ("Malformed messages" charted undecodable payloads, "Unrecoverable gaps (batches)" counted gaps).
     */
    @Test
    void everyPanelsDescriptionNamesTheMetricsItCharts() {
        for (JsonNode panel : dashboard.get("panels")) {
            if (panel.get("type").asText().equals("row")) {
                continue;
            }
            Set<String> charted = new TreeSet<>();
            panel.get("targets")
                    .forEach(t -> charted.addAll(families(t.path("expr").asText())));
            String description = panel.path("description").asText();
            assertThat(charted)
                    .as("metrics of panel %s, each named in its description: %s", panel.path("title"), description)
                    .allMatch(description::contains);
        }
    }

    @Test
    void theDashboardChartsExactlyTheDocumentedMetrics() {
        assertThat(dashboardMetrics()).isEqualTo(documentedMetrics());
    }

    /** Metric families queried by the dashboard ({@code _bucket}/{@code _count}/{@code _sum} folded into their histogram). */
    static Set<String> dashboardMetrics() {
        if (dashboard == null) {
            try {
                load();
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
        Set<String> names = new TreeSet<>();
        for (JsonNode panel : dashboard.get("panels")) {
            for (JsonNode target : panel.path("targets")) {
                names.addAll(families(target.path("expr").asText()));
            }
        }
        return names;
    }

    /** The metric families a PromQL expression reads (a histogram's {@code _bucket}/{@code _count}/{@code _sum} folded). */
    static Set<String> families(String expr) {
        Set<String> names = new TreeSet<>();
        Matcher m = METRIC.matcher(expr);
        while (m.find()) {
            names.add(m.group(1).replaceFirst("_(bucket|count|sum)$", ""));
        }
        return names;
    }

    /** The first column of the table after {@code <!-- metrics -->} in the docs. */
    static Set<String> documentedMetrics() {
        return new TreeSet<>(documentedMetricTypes().keySet());
    }

    /** Name → type ("counter", "gauge", "histogram", "summary") from the documented metrics table. */
    static Map<String, String> documentedMetricTypes() {
        Map<String, String> types = new TreeMap<>();
        for (String[] cells : RepoFiles.tableAfter(METRICS_DOC, "<!-- metrics -->")) {
            Matcher m = CODE.matcher(cells[1]);
            assertThat(m.find())
                    .as("metric name in `code` in %s", String.join("|", cells))
                    .isTrue();
            types.put(m.group(1), cells[2].strip());
        }
        assertThat(types).isNotEmpty();
        assertThat(types.values())
                .allMatch(
                        t -> Set.of("counter", "gauge", "histogram", "summary").contains(t));
        return types;
    }
}

package io.kvindexer.indexer.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.http.IndexerRoutes;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** {@code /metrics}: Dynamo's six metrics with their labels (compatibility.md, Metrics), well-formed text, counters that move. */
public class MetricsEndpointTest {

    private static final Pattern SAMPLE =
            Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[^}]*\\})? (-?[0-9.eE+-]+|NaN|\\+Inf|-Inf)$");

    /** Parses the text format strictly: every non-comment line must be a sample; returns name{labels} → value. */
    public static Map<String, Double> parse(String text) {
        Map<String, Double> out = new HashMap<>();
        for (String line : text.split("\n")) {
            if (line.isEmpty() || line.startsWith("# HELP ") || line.startsWith("# TYPE ")) {
                continue;
            }
            Matcher m = SAMPLE.matcher(line);
            assertThat(m.matches()).as("malformed exposition line: %s", line).isTrue();
            out.put(m.group(1) + (m.group(2) == null ? "" : m.group(2)), Double.parseDouble(m.group(3)));
        }
        return out;
    }

    /** How much a sample grew between two scrapes; a sample not yet exposed counts as 0. */
    private static double grown(Map<String, Double> before, Map<String, Double> after, String sample) {
        return after.getOrDefault(sample, 0.0) - before.getOrDefault(sample, 0.0);
    }

    /** The route cases; {@code http.RoutesTest} runs them, in memory and over a socket. */
    @IndexerRoutes
    public abstract static class Cases {

        @Test
        void exposesDynamoMetricsAndTheyMove(HttpTestClient http) {
            http.post("/register", """
                    {"instance_id":1,"endpoint":"tcp://127.0.0.1:1","model_name":"m","block_size":4}""");
            http.post("/register", """
                    {"instance_id":1,"dp_rank":1,"endpoint":"tcp://127.0.0.1:2","model_name":"m","block_size":4}""");
            http.post("/register", """
                    {"instance_id":2,"endpoint":"tcp://127.0.0.1:3","model_name":"m2","block_size":4}""");
            http.post("/query", "{\"token_ids\":[1,2,3,4],\"model_name\":\"m\"}");
            http.post("/query", "{\"token_ids\":[1,2,3,4],\"model_name\":\"nope\"}");
            http.get("/no/such/route");

            HttpTestClient.Response r = http.get("/metrics");
            r.assertStatus(200);
            assertThat(r.contentType()).startsWith("text/plain");
            Map<String, Double> m = parse(r.body());

            assertThat(m.get("dynamo_kvindexer_models")).isEqualTo(2.0);
            assertThat(m.get("dynamo_kvindexer_workers")).isEqualTo(2.0);
            double listeners = 0;
            for (String status : new String[] {"pending", "active", "paused", "failed"}) {
                Double v = m.get("dynamo_kvindexer_listeners{status=\"" + status + "\"}");
                assertThat(v).as(status).isNotNull();
                listeners += v;
            }
            assertThat(listeners).isEqualTo(3.0);
            assertThat(m)
                    .contains(
                            entry("dynamo_kvindexer_requests_total{endpoint=\"/register\",method=\"POST\"}", 3.0),
                            entry("dynamo_kvindexer_requests_total{endpoint=\"/query\",method=\"POST\"}", 2.0),
                            entry("dynamo_kvindexer_errors_total{endpoint=\"/query\",status_class=\"4xx\"}", 1.0),
                            entry("dynamo_kvindexer_errors_total{endpoint=\"unknown\",status_class=\"4xx\"}", 1.0),
                            entry("dynamo_kvindexer_request_duration_seconds_count{endpoint=\"/query\"}", 2.0));
            assertThat(m)
                    .containsKey("dynamo_kvindexer_request_duration_seconds_bucket{endpoint=\"/query\",le=\"1.0E-4\"}");
            assertThat(m)
                    .containsKey(
                            "dynamo_kvindexer_request_duration_seconds_bucket{endpoint=\"/query\",le=\"52.4288\"}");
            assertThat(m.get("dynamo_kvindexer_query_duration_seconds_count{endpoint=\"/query\"}"))
                    .isEqualTo(1.0);
            assertThat(m).containsKey("dynamo_kvindexer_index_blocks{model=\"m\",tenant=\"default\"}");
            assertThat(m).containsKey("dynamo_kvindexer_index_memberships{model=\"m2\",tenant=\"default\"}");
            assertThat(m).containsEntry("dynamo_kvindexer_index_write_failures_total", 0.0);

            // the scrape itself is counted on the next one, but not timed
            Map<String, Double> again = parse(http.get("/metrics").body());
            assertThat(again.get("dynamo_kvindexer_requests_total{endpoint=\"/metrics\",method=\"GET\"}"))
                    .isEqualTo(1.0);
            assertThat(again)
                    .doesNotContainKey("dynamo_kvindexer_request_duration_seconds_count{endpoint=\"/metrics\"}");
        }

        /** A response the client has read is already counted: a scrape right after it always sees it. */
        @Test
        void countsEachResponseBeforeTheClientSeesIt(HttpTestClient http) {
            String health = "dynamo_kvindexer_requests_total{endpoint=\"/health\",method=\"GET\"}";
            String healthTimed = "dynamo_kvindexer_request_duration_seconds_count{endpoint=\"/health\"}";
            String scrapes = "dynamo_kvindexer_requests_total{endpoint=\"/metrics\",method=\"GET\"}";
            Map<String, Double> before = parse(http.get("/metrics").body());
            for (int i = 1; i <= 200; i++) {
                http.get("/health").assertStatus(200);
                Map<String, Double> m = parse(http.get("/metrics").body());
                for (String sample : new String[] {health, healthTimed, scrapes}) {
                    assertThat(grown(before, m, sample))
                            .as("%s at scrape %d", sample, i)
                            .isEqualTo(i);
                }
            }
        }
    }
}

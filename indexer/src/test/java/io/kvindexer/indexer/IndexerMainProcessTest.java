package io.kvindexer.indexer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvindexer.indexer.http.HttpTestClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The real {@code main} in a child JVM, as a user starts it: exit codes, one-line errors, help, a live server. */
class IndexerMainProcessTest {

    private record Run(int exit, String stdout, String stderr) {}

    private static ProcessBuilder java(Map<String, String> env, String... args) {
        ProcessBuilder pb = IndexerProcess.command(List.of(), args);
        pb.environment().putAll(env);
        return pb;
    }

    private static Run run(Map<String, String> env, String... args) throws Exception {
        Process p = java(env, args).start();
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("process exits").isTrue();
        return new Run(
                p.exitValue(),
                new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8),
                new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    /** A live indexer on a free loopback port: model llama, one instance of two ranks at ports nobody serves. */
    private static IndexerProcess startWithTwoRanks() throws Exception {
        return IndexerProcess.start(
                List.of(),
                "--port",
                "0",
                "--host",
                "127.0.0.1",
                "--block-size",
                "16",
                "--model-name",
                "llama",
                "--workers",
                "1=tcp://127.0.0.1:1,1:1=tcp://127.0.0.1:2");
    }

    @Test
    void badFlagIsOneLineAndNonZeroExit() throws Exception {
        Run r = run(Map.of(), "--port", "notaport");
        assertThat(r.exit()).isNotZero();
        assertThat(r.stderr().strip().lines()).hasSize(1);
        assertThat(r.stderr()).contains("--port");

        r = run(Map.of(), "--workers", "1=tcp://h:1");
        assertThat(r.exit()).isNotZero();
        assertThat(r.stderr().strip()).isEqualTo("kv-indexer: --block-size is required when --workers is specified");

        r = run(Map.of(), "--bogus");
        assertThat(r.exit()).isNotZero();
        assertThat(r.stderr().strip().lines()).hasSize(1);
        assertThat(r.stderr()).contains("--bogus");
    }

    @Test
    void badEnvironmentIsOneLine() throws Exception {
        Run r = run(Map.of("DYN_ROUTER_MIN_INITIAL_WORKERS", "two"), "--port", "0");
        assertThat(r.exit()).isNotZero();
        assertThat(r.stderr().strip())
                .isEqualTo("kv-indexer: DYN_ROUTER_MIN_INITIAL_WORKERS must be a non-negative"
                        + " integer, got \"two\": invalid digit found in string");
    }

    @Test
    void aBadLogVariableIsOneLine() throws Exception {
        Run r = run(Map.of("DYN_LOG", "info,io.kvindexer=loud"), "--port", "0");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.stderr().strip())
                .isEqualTo("kv-indexer: DYN_LOG: unknown level \"loud\" in \"info,io.kvindexer=loud\""
                        + " (error, warn, info, debug, trace or off)");
    }

    /**
     * DYN_LOGGING_JSONL, as a deployment written for Dynamo's indexer sets it: every log line of a start and a
     * shutdown is one JSON object with Dynamo's fields; DYN_LOG=warn leaves out the INFO lines.
     */
    @Test
    void logsJsonLinesWhenAskedTo() throws Exception {
        List<String> logged;
        try (IndexerProcess p = IndexerProcess.start(
                Map.of("DYN_LOGGING_JSONL", "true"),
                List.of(),
                "--port",
                "0",
                "--host",
                "127.0.0.1",
                "--block-size",
                "16",
                "--model-name",
                "llama",
                "--workers",
                "1=tcp://127.0.0.1:1")) {
            assertThat(p.terminate()).as("exits on SIGTERM").isTrue();
            await().atMost(Duration.ofSeconds(10))
                    .untilAsserted(() -> assertThat(p.output()).contains("stopped 1 listeners in"));
            // what main prints on standard output for a person is not a log line
            logged =
                    p.output().lines().filter(l -> !l.startsWith("kv-indexer ")).toList();
        }
        assertThat(logged).isNotEmpty();
        ObjectMapper json = new ObjectMapper();
        List<JsonNode> records = new ArrayList<>();
        for (String line : logged) {
            assertThat(line).as("a log line").startsWith("{");
            records.add(json.readTree(line));
        }
        for (JsonNode r : records) {
            assertThat(r.get("time").asText()).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}Z");
            assertThat(r.get("level").asText()).isIn("ERROR", "WARN", "INFO", "DEBUG", "TRACE");
            assertThat(r.get("target").asText()).isNotEmpty();
        }
        assertThat(records)
                .anySatisfy(r -> assertThat(r.get("message").asText()).startsWith("stopped 1 listeners in"));
    }

    @Test
    void dynLogSetsTheLevels() throws Exception {
        try (IndexerProcess p =
                IndexerProcess.start(Map.of("DYN_LOG", "warn"), List.of(), "--port", "0", "--host", "127.0.0.1")) {
            assertThat(p.terminate()).isTrue();
            await().atMost(Duration.ofSeconds(10))
                    .untilAsserted(() -> assertThat(p.output()).contains("kv-indexer listening on"));
            assertThat(p.output()).doesNotContain(" INFO ");
        }
        try (IndexerProcess p = IndexerProcess.start(List.of(), "--port", "0", "--host", "127.0.0.1")) {
            assertThat(p.terminate()).isTrue();
            await().atMost(Duration.ofSeconds(10))
                    .untilAsserted(() -> assertThat(p.output()).containsPattern("Z INFO io\\.kvindexer\\."));
        }
    }

    @Test
    void helpPrintsFlagsAndExitsZero() throws Exception {
        Run r = run(Map.of(), "--help");
        assertThat(r.exit()).isZero();
        assertThat(r.stdout()).contains("--port", "--workers", "--block-size", "--peers", "--demo");
    }

    /**
     * What the shutdown logs reaches the output: JUL's own shutdown hook closed the console handler beside ours, and
     * the lines of a SIGTERM's shutdown (the listeners stopped, a last snapshot that failed) were lost.
     */
    @Test
    void aShutdownPrintsWhatItLogs() throws Exception {
        try (IndexerProcess p = startWithTwoRanks()) {
            assertThat(p.terminate()).as("exits on SIGTERM").isTrue();
            await().atMost(Duration.ofSeconds(10)) // the reader of its output may lag the exit a little
                    .untilAsserted(() -> assertThat(p.output())
                            .contains("Helidon WebServer stopped all channels", "stopped 2 listeners in"));
        }
    }

    @Test
    void startsAndServes() throws Exception {
        // IndexerProcess.start fails the test when no "listening on" line comes
        try (IndexerProcess p = startWithTwoRanks();
                HttpTestClient http = new HttpTestClient(p.url())) {
            assertThat(p.url()).as("listening line").isNotNull();
            http.get("/health").assertStatus(200);
            var workers = http.get("/workers").json();
            assertThat(workers).hasSize(1);
            assertThat(workers.get(0).get("model_name").asText()).isEqualTo("llama");
            assertThat(workers.get(0).get("endpoints").size()).isEqualTo(2);
        }
    }
}

package io.kvindexer.indexer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.registry.WorkerEntry;
import io.kvindexer.indexer.testkit.LogCapture;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link IndexerApp} as the operator's end-to-end tests use it: flags in, a live server out, clean failures. */
class IndexerAppTest {

    @Test
    void startsFromFlagsOnALoopbackAlias() throws Exception {
        try (IndexerApp app = IndexerApp.start(
                        "--host",
                        "127.0.0.3",
                        "--port",
                        "0",
                        "--block-size",
                        "16",
                        "--model-name",
                        "llama",
                        "--tenant-id",
                        "t",
                        "--workers",
                        "5:2=tcp://127.0.0.3:1");
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            assertThat(app.baseUrl()).isEqualTo("http://127.0.0.3:" + app.port());
            assertThat(app.port()).isPositive();
            var w = http.get("/workers").json().get(0);
            assertThat(w.get("instance_id").asLong()).isEqualTo(5);
            assertThat(w.get("tenant_id").asText()).isEqualTo("t");
            assertThat(w.get("endpoints").get("2").asText()).isEqualTo("tcp://127.0.0.3:1");
        }
    }

    /** Dynamo takes its access-log options without --access-log and ignores them; we take them too, and say so. */
    @Test
    void accessLogOptionsWithoutAnAccessLogAreAWarning() throws Exception {
        try (LogCapture log = LogCapture.warningsOf(IndexerApp.class)) {
            try (IndexerApp app = IndexerApp.start("--host", "127.0.0.1", "--port", "0", "--access-log-local-time")) {
                assertThat(app.port()).isPositive();
            }
            try (IndexerApp app = IndexerApp.start(
                    "--host", "127.0.0.1", "--port", "0", "--access-log-local-time", "--trace-id-header", "x-req")) {
                assertThat(app.port()).isPositive();
            }
            assertThat(log.warnings())
                    .containsExactly(
                            "--access-log-local-time given without --access-log: no access log is written, so it"
                                    + " changes nothing",
                            "--access-log-local-time and --trace-id-header given without --access-log: no access log"
                                    + " is written, so they change nothing");
        }
    }

    @Test
    void accessLogOptionsWithAnAccessLogAreNoWarning(@TempDir Path dir) throws Exception {
        try (LogCapture log = LogCapture.warningsOf(IndexerApp.class);
                IndexerApp app = IndexerApp.start(
                        "--host",
                        "127.0.0.1",
                        "--port",
                        "0",
                        "--access-log",
                        dir.resolve("access.log").toString(),
                        "--access-log-local-time")) {
            assertThat(app.config().accessLog().localTime()).isTrue();
            assertThat(log.warnings()).isEmpty();
        }
    }

    @Test
    void duplicateWorkerEntryFailsStartup() {
        IndexerConfig cfg = IndexerConfig.defaults().with(c -> {
            c.blockSize = 16;
            c.workers = List.of(new WorkerEntry(1, 0, "tcp://127.0.0.1:1"), new WorkerEntry(1, 0, "tcp://127.0.0.1:2"));
        });
        assertThatThrownBy(() -> IndexerApp.start(cfg))
                .isInstanceOf(ConfigException.class)
                .hasMessage("invalid value for --workers: instance 1 dp_rank 0 already registered");
    }

    @Test
    void portInUseFailsStartup() throws Exception {
        try (IndexerApp first = IndexerApp.start(IndexerConfig.defaults())) {
            IndexerConfig same = IndexerCli.parse(
                            new String[] {"--host", "127.0.0.1", "--port", Integer.toString(first.port())},
                            java.util.Map.of())
                    .config();
            assertThatThrownBy(() -> IndexerApp.start(same))
                    .isInstanceOf(RuntimeException.class)
                    .hasMessageStartingWith("cannot listen on 127.0.0.1:" + first.port() + ": ")
                    .hasMessageContaining("--port chooses another");
            // the first one is unaffected
            try (HttpTestClient http = new HttpTestClient(first.baseUrl())) {
                http.get("/health").assertStatus(200);
            }
        }
    }

    @Test
    void helpIsNotAServer() {
        assertThatThrownBy(() -> IndexerApp.start("--help")).isInstanceOf(ConfigException.class);
    }
}

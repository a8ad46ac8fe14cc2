package io.kvindexer.indexer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.registry.WorkerEntry;
import java.util.List;
import org.junit.jupiter.api.Test;

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

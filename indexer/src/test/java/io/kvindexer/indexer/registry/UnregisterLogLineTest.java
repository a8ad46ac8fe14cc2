package io.kvindexer.indexer.registry;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.http.HttpTestClient;
import java.text.MessageFormat;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/**
 * An unregister's log line names what it removed, as the registration's line does: the instance's ranks, model and
 * tenant, also when the request left out the tenant and the rank (it said {@code tenant=null dp_rank=null}, which a
 * search by tenant does not find).
 */
class UnregisterLogLineTest {

    @Test
    void theLineNamesTheRanksModelAndTenantRemoved() throws Exception {
        List<String> lines = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord r) {
                lines.add(MessageFormat.format(r.getMessage(), r.getParameters()));
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        Logger registry = Logger.getLogger(WorkerRegistry.class.getName());
        registry.addHandler(capture);
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            for (int rank = 0; rank < 2; rank++) {
                http.post(
                                "/register",
                                "{\"instance_id\":7,\"dp_rank\":" + rank + ",\"endpoint\":\"tcp://127.0.0.1:"
                                        + (rank + 1) + "\",\"model_name\":\"m\",\"tenant_id\":\"t\",\"block_size\":4}")
                        .assertStatus(201);
            }
            http.post("/unregister", "{\"instance_id\":7,\"model_name\":\"m\"}").assertStatus(200);
        } finally {
            registry.removeHandler(capture);
        }
        assertThat(lines).contains("unregistered instance 7 dp_rank 0,1 for model=m tenant=t");
    }
}

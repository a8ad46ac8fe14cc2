package io.kvindexer.indexer.registry;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.ingest.SequenceWatermark;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Workers registered and unregistered all day, each engine pod with instance ids of its own: the watermark of an
 * unregistered worker is kept for a comeback, but only for the last {@code --max-listeners} unregistered, so the
 * registry does not grow with every pod that ever came and went. A registered worker's watermark, and that of a
 * worker {@code --unregister-grace} keeps detached, is never forgotten.
 */
class ForgottenWatermarksTest {

    private static String reg(long id) {
        return "{\"instance_id\":" + id + ",\"endpoint\":\"tcp://127.0.0.1:" + (20000 + id)
                + "\",\"model_name\":\"m\",\"block_size\":16}";
    }

    private static String unreg(long id) {
        return "{\"instance_id\":" + id + ",\"model_name\":\"m\"}";
    }

    private static IndexerApp start(int maxListeners, Duration grace) throws Exception {
        return IndexerApp.start(IndexerConfig.defaults().with(c -> {
            c.limits = c.limits.with(l -> l.maxListeners = maxListeners);
            c.unregisterGrace = grace;
        }));
    }

    @Test
    void onlyTheLastUnregisteredAreRemembered() throws Exception {
        try (IndexerApp app = start(3, Duration.ZERO);
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            WorkerRegistry registry = app.workers();
            http.post("/register", reg(100)).assertOk(201);
            registry.watermark(100, 0).set(7);
            for (long id = 1; id <= 6; id++) {
                http.post("/register", reg(id)).assertOk(201);
                registry.watermark(id, 0).set(40 + id);
                http.post("/unregister", unreg(id)).assertOk(200);
            }
            for (long id = 1; id <= 3; id++) {
                assertThat(registry.watermark(id, 0))
                        .as("worker %d, unregistered long ago", id)
                        .isNull();
            }
            assertThat(registry.watermark(100, 0).get())
                    .as("a registered worker's")
                    .isEqualTo(7);
            assertThat(registry.watermark(4, 0).get()).isEqualTo(44);
            SequenceWatermark kept = registry.watermark(6, 0);
            assertThat(kept.get()).isEqualTo(46);
            assertThat(registry.watermark(5, 0).get()).isEqualTo(45);

            // a comeback of one remembered goes on from its watermark, and is no longer among the unregistered
            http.post("/register", reg(6)).assertOk(201);
            assertThat(registry.watermark(6, 0)).isSameAs(kept);
            http.post("/register", reg(7)).assertOk(201);
            http.post("/unregister", unreg(7)).assertOk(200);
            http.post("/register", reg(8)).assertOk(201);
            http.post("/unregister", unreg(8)).assertOk(200);
            assertThat(registry.watermark(4, 0)).isNull();
            assertThat(registry.watermark(5, 0).get()).isEqualTo(45);
            assertThat(registry.watermark(6, 0)).isSameAs(kept);
            assertThat(registry.watermark(7, 0)).isNotNull();
            assertThat(registry.watermark(8, 0)).isNotNull();
        }
    }

    @Test
    void aWorkerTheGraceKeepsIsNotForgotten() throws Exception {
        try (IndexerApp app = start(1, Duration.ofHours(1));
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            WorkerRegistry registry = app.workers();
            http.post("/register", reg(1)).assertOk(201);
            registry.watermark(1, 0).set(41);
            http.post("/unregister", unreg(1)).assertOk(200);
            for (long id = 2; id <= 4; id++) {
                http.post("/register", reg(id)).assertOk(201);
                http.post("/unregister", unreg(id)).assertOk(200);
            }
            assertThat(registry.watermark(1, 0).get()).isEqualTo(41);
        }
    }
}

package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import org.junit.jupiter.api.Test;

/**
 * A {@code cache_salt} on the by-hash queries: ignored by default (Dynamo G2); with {@code --mix-cache-salt} (G3's
 * salt rules) refused with G3's 400, because the caller's hashes must already carry the salt.
 */
class CacheSaltByHashTest {

    private static final String REGISTER =
            "{\"instance_id\":1,\"endpoint\":\"tcp://127.0.0.1:1\",\"model_name\":\"m\",\"block_size\":4}";

    private static String byHash(String salt) {
        return "{\"block_hashes\":[1,2],\"model_name\":\"m\",\"cache_salt\":" + salt + "}";
    }

    @Test
    void withSaltMixingASaltIsRefusedOnTheByHashRoutes() throws Exception {
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults().with(c -> c.mixCacheSalt = true));
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            http.post("/register", REGISTER).assertStatus(201);
            for (String route : new String[] {"/query_by_hash", "/query_tiered_by_hash"}) {
                for (String salt : new String[] {"\"tenant-a\"", "\"\""}) {
                    HttpTestClient.Response r = http.post(route, byHash(salt));
                    r.assertStatus(400);
                    assertThat(r.error())
                            .isEqualTo("cache_salt is not accepted by " + route
                                    + "; block_hashes must already include the intended cache salt");
                }
                http.post(route, byHash("null")).assertStatus(200);
            }
        }
    }

    @Test
    void withoutSaltMixingASaltIsIgnored() throws Exception {
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            http.post("/register", REGISTER).assertStatus(201);
            http.post("/query_by_hash", byHash("\"tenant-a\"")).assertStatus(200);
            http.post("/query_tiered_by_hash", byHash("\"tenant-a\"")).assertStatus(200);
        }
    }
}

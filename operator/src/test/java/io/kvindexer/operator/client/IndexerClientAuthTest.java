package io.kvindexer.operator.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.operator.indexer.AuthSecret;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The operator's client sends the indexer's bearer token; indexer pods get it from the optional Secret. */
class IndexerClientAuthTest {

    @Test
    void clientWithTheTokenRegistersOneWithoutIsRefused() throws Exception {
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults().with(c -> c.authToken = "op-token"))) {
            IndexerEndpoint replica = new IndexerEndpoint("kv-0", URI.create(app.baseUrl()));
            IndexerClient with = new IndexerClient(
                    Duration.ofSeconds(2), Duration.ofSeconds(5), IndexerClient.CallObserver.NONE, "op-token");
            IndexerClient without =
                    new IndexerClient(Duration.ofSeconds(5), Duration.ofSeconds(30), IndexerClient.CallObserver.NONE);
            WorkerRegistration r = new WorkerRegistration(1, 0, "tcp://127.0.0.1:5557", null);
            assertThatThrownBy(() -> without.register(replica, r, "m", "t", 16))
                    .isInstanceOfSatisfying(
                            IndexerClientException.class,
                            e -> assertThat(e.status()).isEqualTo(401));
            with.register(replica, r, "m", "t", 16);
            assertThat(without.workers(replica))
                    .singleElement()
                    .satisfies(w -> assertThat(w.instanceId()).isEqualTo(1L));
            with.registerPeer(replica, "http://127.0.0.1:1");
        }
    }

    @Test
    void indexerPodsReadTheTokenFromTheOptionalSecret() {
        EnvVar env = AuthSecret.envVar();
        assertThat(env.getName()).isEqualTo("KV_INDEXER_AUTH_TOKEN");
        assertThat(env.getValueFrom().getSecretKeyRef().getName()).isEqualTo("kv-indexer-auth");
        assertThat(env.getValueFrom().getSecretKeyRef().getKey()).isEqualTo("token");
        assertThat(env.getValueFrom().getSecretKeyRef().getOptional()).isTrue();
        assertThat(AuthSecret.operatorToken(Map.of("KV_INDEXER_AUTH_TOKEN", " t \n")))
                .isEqualTo("t");
        assertThat(AuthSecret.operatorToken(Map.of())).isNull();
    }
}

package io.kvindexer.operator.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.testkit.SecuredIndexer;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A token rotation as it happens in a cluster: the operator reads the new token from the API at once, the replica's
 * mounted file follows later. Neither side refuses the other at any point: the client falls back to the token the
 * replica last accepted, and the replica keeps accepting the old token for its grace period.
 */
class TokenRotationClientTest {

    @TempDir
    Path dir;

    @Test
    void operatorAheadOfTheReplicaAndReplicaAheadOfTheOperatorAreBothServed() throws Exception {
        Path tokenFile = Files.writeString(dir.resolve("token"), "old");
        try (IndexerApp app =
                SecuredIndexer.start(List.of("--auth-token-file", tokenFile.toString()), "--auth-token-grace", "1m")) {
            IndexerClient client =
                    new IndexerClient(Duration.ofSeconds(5), Duration.ofSeconds(30), IndexerClient.CallObserver.NONE);
            URI base = URI.create(app.baseUrl());
            IndexerEndpoint withOld =
                    new IndexerEndpoint("kv-0", base, new ReplicaAccess("ns/kv", "http", "old", null));
            IndexerEndpoint withNew =
                    new IndexerEndpoint("kv-0", base, new ReplicaAccess("ns/kv", "http", "new", null));

            client.registerPeer(withOld, "http://127.0.0.1:1");
            // the operator has the new token, the replica does not yet: the old one it accepted is tried again
            client.registerPeer(withNew, "http://127.0.0.1:2");
            assertThat(client.peers(withNew)).contains("http://127.0.0.1:1", "http://127.0.0.1:2");

            // the replica's file changes; the new token is accepted, and the old one still is
            Path tmp = dir.resolve("token.tmp");
            Files.writeString(tmp, "new");
            Files.move(tmp, tokenFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            IndexerClient fresh =
                    new IndexerClient(Duration.ofSeconds(5), Duration.ofSeconds(30), IndexerClient.CallObserver.NONE);
            await().atMost(Duration.ofSeconds(5)).ignoreExceptions().untilAsserted(() -> {
                fresh.registerPeer(withNew, "http://127.0.0.1:3");
            });
            fresh.registerPeer(withOld, "http://127.0.0.1:4");
            client.deregisterPeer(withNew, "http://127.0.0.1:1");
            assertThat(client.peers(withNew))
                    .containsExactly("http://127.0.0.1:2", "http://127.0.0.1:3", "http://127.0.0.1:4");
        }
    }
}

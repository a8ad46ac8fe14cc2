package io.kvindexer.indexer.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerCli;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The token file is read when the flags are parsed, seconds before the server listens and the file is watched. A
 * Secret rotated in between (the operator rotating it while a replica starts) was taken by the watch as the content
 * already applied: the replica kept the old token for good and refused the new one everyone sends.
 */
class TokenChangedDuringStartTest {

    @TempDir
    Path dir;

    @Test
    void aTokenRotatedWhileTheReplicaStartsIsTakenUp() throws Exception {
        Path tokenFile = Files.writeString(dir.resolve("token"), "token-before");
        IndexerCli.Parsed parsed = IndexerCli.parse(
                new String[] {
                    "--host",
                    "127.0.0.1",
                    "--port",
                    "0",
                    "--auth-token-file",
                    tokenFile.toString(),
                    "--reload-interval",
                    "100ms"
                },
                Map.of());
        Files.writeString(tokenFile, "token-after"); // after the flags were read, before the watch starts
        try (IndexerApp app = IndexerApp.start(parsed.config());
                HttpClient client = HttpClient.newHttpClient()) {
            await().atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> dumpStatus(client, app, "token-after") == 200);
            // the rotation is a rotation like any other: the token it replaced is accepted for the grace period
            assertThat(dumpStatus(client, app, "token-before")).isEqualTo(200);
            assertThat(dumpStatus(client, app, "another-token")).isEqualTo(401);
        }
    }

    private static int dumpStatus(HttpClient client, IndexerApp app, String token) throws Exception {
        return client.send(
                        HttpRequest.newBuilder(URI.create(app.baseUrl() + "/dump"))
                                .header("Authorization", "Bearer " + token)
                                .build(),
                        HttpResponse.BodyHandlers.discarding())
                .statusCode();
    }
}

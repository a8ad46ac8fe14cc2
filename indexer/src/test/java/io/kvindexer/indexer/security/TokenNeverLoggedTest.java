package io.kvindexer.indexer.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
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

/** The bearer token never reaches the access log: not as a path, not through --trace-id-header. */
class TokenNeverLoggedTest {

    private static final String TOKEN = "token-that-must-not-be-logged";

    @TempDir
    Path dir;

    @Test
    void aCredentialHeaderIsNotATraceIdHeader() {
        for (String header : new String[] {"Authorization", "authorization", "Proxy-Authorization", "Cookie"}) {
            assertThatThrownBy(() -> IndexerCli.parse(
                            new String[] {"--access-log", dir.resolve("a.log").toString(), "--trace-id-header", header},
                            Map.of()))
                    .hasMessage("invalid value for --trace-id-header: `" + header
                            + "` carries credentials, which the access log never records");
        }
    }

    @Test
    void requestsWithTheTokenLeaveItOutOfTheAccessLog() throws Exception {
        Path tokenFile = Files.writeString(dir.resolve("token"), TOKEN);
        Path accessLog = dir.resolve("access.log");
        try (IndexerApp app = IndexerApp.start(
                        "--host",
                        "127.0.0.1",
                        "--port",
                        "0",
                        "--auth-token-file",
                        tokenFile.toString(),
                        "--access-log",
                        accessLog.toString());
                HttpClient client = HttpClient.newHttpClient()) {
            for (String token : new String[] {TOKEN, TOKEN + "-wrong"}) {
                HttpResponse<String> r = client.send(
                        HttpRequest.newBuilder(URI.create(app.baseUrl() + "/dump"))
                                .header("Authorization", "Bearer " + token)
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(r.body()).doesNotContain(TOKEN);
            }
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> Files.exists(accessLog)
                            && Files.readString(accessLog).lines().count() >= 2);
            assertThat(Files.readString(accessLog)).contains("\"/dump\"").doesNotContain(TOKEN);
        }
    }
}

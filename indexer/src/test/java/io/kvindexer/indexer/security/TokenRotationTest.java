package io.kvindexer.indexer.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.testkit.SecuredIndexer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** --auth-token-file is re-read when it changes; the previous token keeps working for --auth-token-grace. */
class TokenRotationTest {

    @TempDir
    Path dir;

    private static int dumpStatus(HttpTestClient http, String token) {
        return http.request("GET", "/dump", null, null, "Authorization", "Bearer " + token)
                .status();
    }

    @Test
    void aClientSwitchingTokensDuringTheGracePeriodIsNeverRefused() throws Exception {
        Path tokenFile = Files.writeString(dir.resolve("token"), "old-token\n");
        try (IndexerApp app = SecuredIndexer.start(
                        List.of("--auth-token-file", tokenFile.toString()), "--auth-token-grace", "3s");
                HttpTestClient http = new HttpTestClient(app.baseUrl());
                HttpTestClient probe = new HttpTestClient(app.baseUrl())) {
            assertThat(dumpStatus(http, "new-token")).isEqualTo(401);
            AtomicReference<String> clientToken = new AtomicReference<>("old-token");
            AtomicBoolean running = new AtomicBoolean(true);
            AtomicInteger sent = new AtomicInteger();
            Map<Integer, Integer> statuses = new ConcurrentHashMap<>();
            Thread client = Thread.ofVirtual().start(() -> {
                long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                while (running.get() && System.nanoTime() < deadline) {
                    statuses.merge(dumpStatus(http, clientToken.get()), 1, Integer::sum);
                    sent.incrementAndGet();
                }
            });
            await().atMost(Duration.ofSeconds(5)).until(() -> sent.get() >= 5);

            TestCa.writeAtomically(tokenFile, "new-token\n"); // the rotation
            await().atMost(Duration.ofSeconds(2))
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> dumpStatus(probe, "new-token") == 200);
            int beforeSwitch = sent.get();
            await().atMost(Duration.ofSeconds(2)).until(() -> sent.get() >= beforeSwitch + 5);
            clientToken.set("new-token"); // the client sees the new Secret later, within the grace period
            int afterSwitch = sent.get();
            await().atMost(Duration.ofSeconds(2)).until(() -> sent.get() >= afterSwitch + 5);
            running.set(false);
            client.join();

            assertThat(statuses).containsOnlyKeys(200);
            // both tokens were in use while the grace period ran
            assertThat(dumpStatus(probe, "old-token")).isEqualTo(200);
            // after it, only the new token opens the door
            await().atMost(Duration.ofSeconds(10)).until(() -> dumpStatus(probe, "old-token") == 401);
            assertThat(dumpStatus(probe, "new-token")).isEqualTo(200);
            assertThat(List.of(dumpStatus(probe, "other"))).containsExactly(401);
        }
    }

    @Test
    void anEmptyOrMissingFileDuringARewriteKeepsTheTokens() throws Exception {
        Path tokenFile = Files.writeString(dir.resolve("token"), "t1");
        try (IndexerApp app = SecuredIndexer.start(List.of("--auth-token-file", tokenFile.toString()));
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            Files.writeString(tokenFile, "");
            Thread.sleep(400);
            assertThat(dumpStatus(http, "t1")).isEqualTo(200);
            Files.delete(tokenFile);
            Thread.sleep(400);
            assertThat(dumpStatus(http, "t1")).isEqualTo(200);
            Files.writeString(tokenFile, "t2");
            await().atMost(Duration.ofSeconds(5)).until(() -> dumpStatus(http, "t2") == 200);
        }
    }
}

package io.kvindexer.packaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The indexer image, without a Docker engine: indexer/Dockerfile is read, exactly the files its COPY lines name are
 * laid out in a temporary root as the image would hold them, its RUN step trains the AOT cache there, and its
 * ENTRYPOINT is started from there as a real process. If the image missed a library or pointed at the wrong jar, this
 * process would not serve /health.
 */
class IndexerImageTest {

    private static final Pattern LISTENING = Pattern.compile("listening on (http://\\S+)");

    @TempDir
    Path root;

    @Test
    void theDockerfileBuildsASmallNonRootJreImageOfTheThinJarAndItsLibs() {
        Dockerfile image = ImageChecks.assertThinJarImage("indexer", "kv-indexer.jar");
        assertThat(image.cmd()).containsExactly("--port", "8090");
        assertThat(image.expose()).as("EXPOSE: the port CMD serves").containsExactly("8090");
        // the cache is trained where the image is built, on the image's own jar, and used where it runs
        assertThat(image.runs())
                .extracting(Dockerfile.Run::command)
                .containsExactly(List.of(
                        "java",
                        "--sun-misc-unsafe-memory-access=allow",
                        "-XX:AOTCacheOutput=/app/kv-indexer.aot",
                        "-jar",
                        "/app/kv-indexer.jar",
                        "--aot-training"));
        assertThat(image.entrypoint())
                .containsExactly(
                        "java",
                        "--sun-misc-unsafe-memory-access=allow",
                        "-XX:AOTCache=/app/kv-indexer.aot",
                        "-jar",
                        "/app/kv-indexer.jar");
        assertThat(image.runs().getFirst().env()).isEqualTo(image.env());
    }

    /**
     * The benchmarks live in bench/, never in the product: the service jar holds no {@code io.kvindexer.bench} class,
     * and none of its classes names a desktop-graphics type (the benchmarks' charts use java.awt and ImageIO).
     */
    @Test
    void theServiceJarHoldsNoBenchmarkAndNoDesktopGraphics() throws IOException {
        Path jar = RepoFiles.root().resolve("indexer/target/kv-indexer.jar");
        List<String> classes = new ArrayList<>();
        List<String> graphics = new ArrayList<>();
        try (JarFile file = new JarFile(jar.toFile())) {
            for (JarEntry entry : Collections.list(file.entries())) {
                if (!entry.getName().endsWith(".class")) {
                    continue;
                }
                classes.add(entry.getName());
                try (InputStream in = file.getInputStream(entry)) {
                    // a class that uses a type names it in its constant pool, in internal form
                    String pool = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
                    if (pool.contains("java/awt/") || pool.contains("javax/imageio/")) {
                        graphics.add(entry.getName());
                    }
                }
            }
        }
        assertThat(classes).as("classes of %s", jar).contains("io/kvindexer/indexer/IndexerMain.class");
        assertThat(classes).noneMatch(name -> name.startsWith("io/kvindexer/bench/"));
        assertThat(graphics).as("classes naming java.awt or javax.imageio").isEmpty();
    }

    /**
     * The laid-out image starts with the AOT cache its RUN step trained ({@code -XX:AOTMode=on}: a JVM that cannot use
     * the cache fails to start), and, once the jar no longer matches the cache (a jar replaced after training), still
     * starts without it, saying why.
     */
    @Test
    void theImageLayoutTrainsItsAotCacheAndStartsWithItAndWithoutIt() throws Exception {
        LaidOutImage image = LaidOutImage.layOut("indexer", "kv-indexer.jar", root);
        assertThat(image.file("/app/kv-indexer.aot")).isNotEmptyFile();
        // the training decodes engine events with msgpack-core, which reads through sun.misc.Unsafe: no JDK warning
        assertThat(Files.readString(root.resolve("run-0.log"))).doesNotContain("sun.misc.Unsafe");
        ProcessBuilder withCache = image.command(List.of("--port", "0", "--host", "127.0.0.1"))
                .redirectError(root.resolve("stderr.txt").toFile());
        withCache.environment().merge("JAVA_TOOL_OPTIONS", " -XX:AOTMode=on", String::concat);
        try (LaidOutImage.Running running = LaidOutImage.Running.start(withCache)) {
            serveHealthAndReady(running.process());
        }

        Path jar = image.file("/app/kv-indexer.jar");
        Files.setLastModifiedTime(
                jar, FileTime.fromMillis(Files.getLastModifiedTime(jar).toMillis() + 60_000));
        ProcessBuilder stale = image.command(List.of("--port", "0", "--host", "127.0.0.1"))
                .redirectError(root.resolve("stderr.txt").toFile());
        try (LaidOutImage.Running running = LaidOutImage.Running.start(stale)) {
            String stdout = serveHealthAndReady(running.process());
            assertThat(stdout).contains("shared class paths mismatch");
        }
    }

    /** Waits for the process to serve /health and then /ready; returns its stdout so far. */
    private String serveHealthAndReady(Process process) throws Exception {
        AtomicReference<String> baseUrl = new AtomicReference<>();
        StringBuilder stdout = new StringBuilder();
        Thread.ofVirtual().start(() -> {
            try (BufferedReader out =
                    new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = out.readLine()) != null; ) {
                    synchronized (stdout) {
                        stdout.append(line).append('\n');
                    }
                    Matcher m = LISTENING.matcher(line);
                    if (m.find()) {
                        baseUrl.compareAndSet(null, m.group(1));
                    }
                }
            } catch (IOException ignored) {
                // the process ended
            }
        });
        await().atMost(Duration.ofSeconds(90))
                .failFast(() -> assertThat(process.isAlive())
                        .as(() -> "the process is running; " + output(stdout))
                        .isTrue())
                .untilAsserted(() -> assertThat(baseUrl.get())
                        .as(() -> "printed its URL; " + output(stdout))
                        .isNotNull());

        try (HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()) {
            HttpResponse<String> health = http.send(
                    HttpRequest.newBuilder(URI.create(baseUrl.get() + "/health"))
                            .timeout(Duration.ofSeconds(10))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).isEqualTo(200);
            // no peers, no minimum of workers: the replica becomes ready on its own
            await().atMost(Duration.ofSeconds(60))
                    .untilAsserted(() -> assertThat(http.send(
                                            HttpRequest.newBuilder(URI.create(baseUrl.get() + "/ready"))
                                                    .timeout(Duration.ofSeconds(10))
                                                    .build(),
                                            HttpResponse.BodyHandlers.ofString())
                                    .statusCode())
                            .isEqualTo(200));
        }
        assertThat(process.isAlive()).isTrue();
        synchronized (stdout) {
            return stdout.toString();
        }
    }

    private String output(StringBuilder stdout) {
        try {
            synchronized (stdout) {
                return "stdout: " + stdout + " / stderr: " + Files.readString(root.resolve("stderr.txt"));
            }
        } catch (IOException e) {
            return "stdout: " + stdout + " / stderr unreadable: " + e;
        }
    }
}

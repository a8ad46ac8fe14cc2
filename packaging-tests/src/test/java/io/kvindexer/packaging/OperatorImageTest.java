package io.kvindexer.packaging;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The operator image, without a Docker engine: operator/Dockerfile is read, exactly the files its COPY lines name
 * are laid out in a temporary root, and its ENTRYPOINT is started from there as a real process against a fabric8
 * mock API server (through a kubeconfig, as outside a cluster). It must answer /healthz, /readyz and /metrics.
 */
@EnableKubernetesMockClient(crud = true, https = false)
class OperatorImageTest {

    static KubernetesMockServer server;
    static KubernetesClient client;

    @TempDir
    Path root;

    private Process process;

    @AfterEach
    void stop() throws InterruptedException {
        if (process != null) {
            process.destroy();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }

    @Test
    void theDockerfileBuildsASmallNonRootJreImageOfTheThinJarAndItsLibs() {
        Dockerfile image = Dockerfile.parse(RepoFiles.root().resolve("operator/Dockerfile"));

        ImageChecks.assertSmallJre21PlusBase(image);
        ImageChecks.assertNonRootUser(image);
        assertThat(image.copies()).containsExactly(
                new Dockerfile.Copy("target/libs/", "/app/libs/"),
                new Dockerfile.Copy("target/kv-indexer-operator.jar", "/app/kv-indexer-operator.jar"));
        assertThat(image.entrypoint()).containsExactly("java", "-jar", "/app/kv-indexer-operator.jar");
        assertThat(RepoFiles.read(RepoFiles.root().resolve("operator/.dockerignore")).lines().toList())
                .contains("*", "!target/kv-indexer-operator.jar", "!target/libs/");
    }

    @Test
    void theImageLayoutStartsAgainstAnApiServerAndServesProbesAndMetrics() throws Exception {
        Dockerfile image = Dockerfile.parse(RepoFiles.root().resolve("operator/Dockerfile"));
        image.layOut(root);
        ImageChecks.assertManifestClassPathIsExactlyTheLibs(Dockerfile.inImage(root, "/app/kv-indexer-operator.jar"));

        Path kubeconfig = root.resolve("kubeconfig");
        Files.writeString(kubeconfig, """
                apiVersion: v1
                kind: Config
                clusters:
                  - name: mock
                    cluster: {server: "%s", insecure-skip-tls-verify: true}
                users:
                  - name: mock
                    user: {token: mock-token}
                contexts:
                  - name: mock
                    context: {cluster: mock, user: mock, namespace: default}
                current-context: mock
                """.formatted(client.getMasterUrl().toString().replaceAll("/$", "")));
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        List<String> command = image.hostCommand(root, java, List.of("--probe-port", Integer.toString(port)));
        ProcessBuilder builder = new ProcessBuilder(command)
                .directory(Dockerfile.inImage(root, image.workdir()).toFile())
                .redirectOutput(root.resolve("stdout.txt").toFile())
                .redirectError(root.resolve("stderr.txt").toFile());
        builder.environment().putAll(image.env());
        builder.environment().put("KUBECONFIG", kubeconfig.toString());
        builder.environment().keySet().removeIf(k -> k.startsWith("KUBERNETES_") || k.startsWith("POD_"));
        process = builder.start();

        String base = "http://127.0.0.1:" + port;
        try (HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()) {
            await().atMost(Duration.ofSeconds(120))
                    .failFast(() -> assertThat(process.isAlive()).as(this::output).isTrue())
                    .ignoreExceptions()
                    .untilAsserted(() -> {
                        assertThat(status(http, base + "/healthz")).isEqualTo(200);
                        assertThat(status(http, base + "/readyz")).isEqualTo(200);
                    });
            assertThat(status(http, base + "/metrics")).isEqualTo(200);
        }
        assertThat(process.isAlive()).as(this::output).isTrue();
    }

    private static int status(HttpClient http, String url) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    private String output() {
        try {
            return "stdout: " + Files.readString(root.resolve("stdout.txt"))
                    + " / stderr: " + Files.readString(root.resolve("stderr.txt"));
        } catch (IOException e) {
            return "output unreadable: " + e;
        }
    }
}

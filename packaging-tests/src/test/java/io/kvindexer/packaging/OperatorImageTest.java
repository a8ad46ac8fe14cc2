package io.kvindexer.packaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.kvindexer.operator.OperatorCli;
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
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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

    @Test
    void theDockerfileBuildsASmallNonRootJreImageOfTheThinJarAndItsLibs() {
        ImageChecks.assertThinJarImage("operator", "kv-indexer-operator.jar");
    }

    /** EXPOSE documents the port the operator serves by default: its probes' and metrics' (the chart's httpPort). */
    @Test
    void theImageExposesTheProbePortTheOperatorServes() throws Exception {
        int probePort = OperatorCli.parse(new String[0], Map.of()).options().probePort();
        assertThat(Dockerfile.parse(RepoFiles.root().resolve("operator/Dockerfile"))
                        .expose())
                .containsExactly(String.valueOf(probePort));
    }

    @Test
    void theImageLayoutStartsAgainstAnApiServerAndServesProbesAndMetrics() throws Exception {
        LaidOutImage image = LaidOutImage.layOut("operator", "kv-indexer-operator.jar", root);

        Path kubeconfig = root.resolve("kubeconfig");
        Files.writeString(
                kubeconfig, """
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
        ProcessBuilder builder = image.command(List.of("--probe-port", Integer.toString(port)))
                .redirectOutput(root.resolve("stdout.txt").toFile())
                .redirectError(root.resolve("stderr.txt").toFile());
        builder.environment().put("KUBECONFIG", kubeconfig.toString());
        builder.environment().put("DYN_LOGGING_JSONL", "true"); // Dynamo's: one JSON object per log line
        builder.environment().keySet().removeIf(k -> k.startsWith("KUBERNETES_") || k.startsWith("POD_"));
        try (LaidOutImage.Running running = LaidOutImage.Running.start(builder)) {
            servesProbesAndMetrics(running.process(), "http://127.0.0.1:" + port);
        }
        // stopped by SIGTERM: the shutdown's own line is printed, not lost to JUL's shutdown hook closing its handler
        assertThat(output()).contains("kv-indexer-operator started", "kv-indexer-operator stopped");
        List<String> logged = Files.readAllLines(root.resolve("stderr.txt")).stream()
                .filter(line -> !line.isBlank())
                // the JVM's own first line, for the image's JAVA_TOOL_OPTIONS; every other one is a log record
                .filter(line -> !line.startsWith("Picked up JAVA_TOOL_OPTIONS: "))
                .toList();
        assertThat(logged).isNotEmpty().allSatisfy(line -> {
            JsonNode record = new ObjectMapper().readTree(line);
            assertThat(record.get("level").asText()).isIn("ERROR", "WARN", "INFO", "DEBUG", "TRACE");
            assertThat(record.get("target").asText()).isNotEmpty();
            assertThat(record.has("time") && record.has("message")).isTrue();
        });
    }

    private void servesProbesAndMetrics(Process process, String base) throws Exception {
        try (HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()) {
            await().atMost(Duration.ofSeconds(120))
                    .failFast(
                            () -> assertThat(process.isAlive()).as(this::output).isTrue())
                    .ignoreExceptions()
                    .untilAsserted(() -> {
                        assertThat(status(http, base + "/healthz")).isEqualTo(200);
                        assertThat(status(http, base + "/readyz")).isEqualTo(200);
                    });
            HttpResponse<String> metrics = http.send(
                    HttpRequest.newBuilder(URI.create(base + "/metrics"))
                            .timeout(Duration.ofSeconds(10))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(metrics.statusCode()).isEqualTo(200);
            // the JVM's and the process's own beside the operator's
            assertThat(metrics.body()).contains("# TYPE jvm_memory_used_bytes gauge", "# TYPE process_open_fds gauge");
        }
        assertThat(process.isAlive()).as(this::output).isTrue();
    }

    private static int status(HttpClient http, String url) throws IOException, InterruptedException {
        return http.send(
                        HttpRequest.newBuilder(URI.create(url))
                                .timeout(Duration.ofSeconds(10))
                                .build(),
                        HttpResponse.BodyHandlers.discarding())
                .statusCode();
    }

    private String output() {
        try {
            return "stdout: " + Files.readString(root.resolve("stdout.txt")) + " / stderr: "
                    + Files.readString(root.resolve("stderr.txt"));
        } catch (IOException e) {
            return "output unreadable: " + e;
        }
    }
}

package io.kvindexer.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every manifest under examples/: our resources validate against the CRD schemas (networknt JSON-schema
 * validator on the CRDs' openAPIV3Schema), core objects parse as typed Kubernetes objects, and each engine
 * Deployment publishes exactly where the KvWorker selecting it expects (bind address, ports, block size), whether
 * its KV-events configuration is a flag (vLLM, SGLang) or an LLM API options file from a ConfigMap (TensorRT-LLM).
 */
class ExamplesTest {

    private static final Pattern BIND_ANY = Pattern.compile("^tcp://\\*:(\\d+)$");
    private static final ObjectMapper JSON = new ObjectMapper();

    private static CrdSchemas schemas;
    private static List<Example> examples;

    /** One YAML document of one example file, as a tree and as a fabric8 object. */
    record Example(Path file, JsonNode tree, HasMetadata object) {
        String describe() {
            return file.getFileName() + " " + tree.path("kind").asText() + "/"
                    + tree.at("/metadata/name").asText();
        }
    }

    @BeforeAll
    static void load() throws IOException {
        schemas = CrdSchemas.load(RepoFiles.root().resolve("crds"));
        examples = new ArrayList<>();
        try (Stream<Path> files = Files.list(RepoFiles.root().resolve("examples"))) {
            for (Path file : files.filter(
                            f -> f.toString().endsWith(".yaml") || f.toString().endsWith(".yml"))
                    .sorted()
                    .toList()) {
                for (String doc : RepoFiles.documents(RepoFiles.read(file))) {
                    examples.add(new Example(
                            file, CrdSchemas.YAML.readTree(doc), (HasMetadata) RepoFiles.SERIALIZATION.unmarshal(doc)));
                }
            }
        }
    }

    @Test
    void theExpectedExamplesAreThere() {
        assertThat(examples)
                .extracting(e -> e.file().getFileName().toString())
                .contains("kvindexer.yaml", "vllm-engine.yaml", "sglang-engine.yaml", "trtllm-engine.yaml");
        assertThat(schemas.kinds()).contains("kvindexer.io/v1alpha1/KvIndexer", "kvindexer.io/v1alpha1/KvWorker");
    }

    @Test
    void ourResourcesValidateAgainstTheCrdSchemas() {
        List<Example> ours = examples.stream()
                .filter(e -> e.tree().path("apiVersion").asText().startsWith("kvindexer.io/"))
                .toList();
        assertThat(ours).extracting(e -> e.tree().path("kind").asText()).contains("KvIndexer", "KvWorker");
        for (Example example : ours) {
            assertThat(schemas.covers(example.tree()))
                    .as("a CRD for %s", example.describe())
                    .isTrue();
            assertThat(schemas.validate(example.tree()))
                    .as("schema errors of %s", example.describe())
                    .isEmpty();
        }
    }

    @Test
    void coreObjectsParseAsTypedKubernetesObjects() {
        for (Example example : examples) {
            if (!example.tree().path("apiVersion").asText().startsWith("kvindexer.io/")) {
                assertThat(example.object()).as(example.describe()).isNotInstanceOf(GenericKubernetesResource.class);
            }
            assertThat(example.object().getMetadata().getName())
                    .as(example.describe())
                    .isNotBlank();
        }
    }

    @Test
    void theValidatorRejectsWhatTheApiServerWouldReject() {
        ObjectNode worker = (ObjectNode) examples.stream()
                .filter(e -> e.tree().path("kind").asText().equals("KvWorker"))
                .findFirst()
                .orElseThrow()
                .tree();

        assertThat(schemas.validate(with(worker, "/spec", s -> s.put("zmqPort", 70000))))
                .isNotEmpty()
                .anyMatch(m -> m.contains("zmqPort"));
        assertThat(schemas.validate(with(worker, "/spec", s -> s.put("blockSize", 0))))
                .isNotEmpty()
                .anyMatch(m -> m.contains("blockSize"));
        assertThat(schemas.validate(with(worker, "/spec", s -> s.remove("modelName"))))
                .isNotEmpty()
                .anyMatch(m -> m.contains("modelName"));
        assertThat(schemas.validate(with(worker, "/spec", s -> s.put("blocksize", 16))))
                .isNotEmpty()
                .anyMatch(m -> m.contains("blocksize"));
    }

    /** An engine's KV-events configuration, wherever the engine takes it from, and its block size. */
    record EventsConfig(JsonNode config, int blockSize) {}

    @Test
    void everyEngineDeploymentPublishesWhereItsKvWorkerListens() throws IOException {
        List<Example> engines = examples.stream()
                .filter(e ->
                        e.object() instanceof Deployment d && eventsConfig(d).isPresent())
                .toList();
        assertThat(engines)
                .extracting(e -> e.object().getMetadata().getName())
                .contains("vllm-llama", "sglang-qwen", "trtllm-llama");

        for (Example engine : engines) {
            Deployment deployment = (Deployment) engine.object();
            Container container = deployment.getSpec().getTemplate().getSpec().getContainers().stream()
                    .filter(c -> eventsConfig(deployment, c).isPresent())
                    .findFirst()
                    .orElseThrow();
            EventsConfig events = eventsConfig(deployment, container).orElseThrow();
            JsonNode config = events.config();
            Map<String, String> podLabels =
                    deployment.getSpec().getTemplate().getMetadata().getLabels();
            List<JsonNode> workers = examples.stream()
                    .map(Example::tree)
                    .filter(t -> t.path("kind").asText().equals("KvWorker"))
                    .filter(t -> selects(t.at("/spec/selector/matchLabels"), podLabels))
                    .toList();
            assertThat(workers).as("a KvWorker selecting %s", engine.describe()).hasSize(1);
            JsonNode spec = workers.getFirst().path("spec");
            String what = engine.describe();

            assertThat(config.path("publisher").asText())
                    .as("%s publisher", what)
                    .isEqualTo("zmq");
            if (container.getImage().contains("vllm") || container.getImage().contains("tensorrt-llm")) {
                assertThat(config.path("enable_kv_cache_events").asBoolean())
                        .as("%s enable_kv_cache_events", what)
                        .isTrue();
            }
            // the engine must BIND: only an address with '*' binds (tcp://0.0.0.0:... makes vLLM connect)
            assertThat(boundPort(config.path("endpoint").asText()))
                    .as("%s endpoint port", what)
                    .isEqualTo(spec.path("zmqPort").asInt(5557));
            if (spec.has("replayPort")) {
                assertThat(boundPort(config.path("replay_endpoint").asText()))
                        .as("%s replay port", what)
                        .isEqualTo(spec.path("replayPort").asInt());
            }
            assertThat(events.blockSize())
                    .as("%s block size vs KvWorker blockSize", what)
                    .isEqualTo(spec.path("blockSize").asInt());
            assertThat(container.getPorts())
                    .extracting(ContainerPort::getContainerPort)
                    .as("%s declared ports", what)
                    .contains(spec.path("zmqPort").asInt(5557));
            if (spec.has("replayPort")) {
                assertThat(container.getPorts())
                        .extracting(ContainerPort::getContainerPort)
                        .as("%s declared replay port", what)
                        .contains(spec.path("replayPort").asInt());
            }
            assertThat(container.getReadinessProbe())
                    .as("%s readiness probe (only Ready pods are registered)", what)
                    .isNotNull();
        }
    }

    @Test
    void theTensorRtLlmOptionsFileKeepsBlockReuseOnAndTheEventsInsideKvCacheConfig() {
        Deployment trtllm = (Deployment) examples.stream()
                .filter(e -> e.object() instanceof Deployment
                        && e.object().getMetadata().getName().equals("trtllm-llama"))
                .findFirst()
                .orElseThrow()
                .object();
        Container container =
                trtllm.getSpec().getTemplate().getSpec().getContainers().getFirst();
        JsonNode options = trtllmOptions(trtllm, container).orElseThrow();
        assertThat(options.at("/kv_cache_config/enable_block_reuse").asBoolean(true))
                .as("block reuse (without it no block is stored for others)")
                .isTrue();
        assertThat(options.has("kv_events_config"))
                .as("kv_events_config belongs inside kv_cache_config")
                .isFalse();
        assertThat(container.getArgs()).contains("--backend=pytorch");
    }

    // ---- helpers

    private static int boundPort(String endpoint) {
        Matcher m = BIND_ANY.matcher(endpoint);
        assertThat(m.matches())
                .as("endpoint %s binds on all interfaces as tcp://*:<port>", endpoint)
                .isTrue();
        return Integer.parseInt(m.group(1));
    }

    private static Optional<EventsConfig> eventsConfig(Deployment deployment) {
        return deployment.getSpec().getTemplate().getSpec().getContainers().stream()
                .map(c -> eventsConfig(deployment, c))
                .flatMap(Optional::stream)
                .findFirst();
    }

    /** vLLM / SGLang: the --kv-events-config flag; TensorRT-LLM: kv_cache_config of its LLM API options file. */
    private static Optional<EventsConfig> eventsConfig(Deployment deployment, Container container) {
        Optional<String> flag = kvEventsArg(container);
        if (flag.isPresent()) {
            try {
                return Optional.of(new EventsConfig(JSON.readTree(flag.get()), blockSizeArg(container)));
            } catch (IOException e) {
                throw new AssertionError("--kv-events-config of " + container.getName() + " is not JSON", e);
            }
        }
        return trtllmOptions(deployment, container)
                .filter(o -> o.at("/kv_cache_config/kv_events_config").isObject())
                .map(o -> new EventsConfig(
                        o.at("/kv_cache_config/kv_events_config"),
                        o.at("/kv_cache_config/tokens_per_block").asInt(32)));
    }

    /**
     * The file named by {@code --extra_llm_api_options=} (or {@code --config=}), read from the ConfigMap volume
     * mounted at its directory.
     */
    private static Optional<JsonNode> trtllmOptions(Deployment deployment, Container container) {
        List<String> args = container.getArgs() == null ? List.of() : container.getArgs();
        Optional<String> path = args.stream()
                .filter(a -> a.startsWith("--extra_llm_api_options=") || a.startsWith("--config="))
                .map(a -> a.substring(a.indexOf('=') + 1))
                .findFirst();
        if (path.isEmpty() || container.getVolumeMounts() == null) {
            return Optional.empty();
        }
        String file = path.get();
        for (var mount : container.getVolumeMounts()) {
            if (!file.startsWith(mount.getMountPath() + "/")) {
                continue;
            }
            String key = file.substring(mount.getMountPath().length() + 1);
            String configMap = deployment.getSpec().getTemplate().getSpec().getVolumes().stream()
                    .filter(v -> v.getName().equals(mount.getName()) && v.getConfigMap() != null)
                    .map(v -> v.getConfigMap().getName())
                    .findFirst()
                    .orElseThrow(() -> new AssertionError(file + " is not on a ConfigMap volume"));
            String text = examples.stream()
                    .map(Example::object)
                    .filter(o -> o instanceof io.fabric8.kubernetes.api.model.ConfigMap
                            && o.getMetadata().getName().equals(configMap))
                    .map(o -> ((io.fabric8.kubernetes.api.model.ConfigMap) o)
                            .getData()
                            .get(key))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("ConfigMap " + configMap + " with key " + key + " (for "
                            + file + ") not among the examples"));
            try {
                return Optional.of(CrdSchemas.YAML.readTree(text));
            } catch (IOException e) {
                throw new AssertionError(file + " in ConfigMap " + configMap + " is not YAML", e);
            }
        }
        return Optional.empty();
    }

    /** The value after "--kv-events-config" (separate argument or "--kv-events-config=..."). */
    private static Optional<String> kvEventsArg(Container container) {
        List<String> args = container.getArgs() == null ? List.of() : container.getArgs();
        for (int i = 0; i < args.size(); i++) {
            if (args.get(i).equals("--kv-events-config") && i + 1 < args.size()) {
                return Optional.of(args.get(i + 1));
            }
            if (args.get(i).startsWith("--kv-events-config=")) {
                return Optional.of(args.get(i).substring("--kv-events-config=".length()));
            }
        }
        return Optional.empty();
    }

    /** vLLM's --block-size or SGLang's --page-size. */
    private static int blockSizeArg(Container container) {
        for (String arg : container.getArgs()) {
            for (String flag : List.of("--block-size=", "--page-size=")) {
                if (arg.startsWith(flag)) {
                    return Integer.parseInt(arg.substring(flag.length()));
                }
            }
        }
        throw new AssertionError("no --block-size= / --page-size= in " + container.getArgs());
    }

    private static boolean selects(JsonNode matchLabels, Map<String, String> labels) {
        if (matchLabels.isMissingNode() || matchLabels.isEmpty()) {
            return false;
        }
        for (var it = matchLabels.properties().iterator(); it.hasNext(); ) {
            var entry = it.next();
            if (!entry.getValue().asText().equals(labels.get(entry.getKey()))) {
                return false;
            }
        }
        return true;
    }

    private static JsonNode with(ObjectNode manifest, String pointer, java.util.function.Consumer<ObjectNode> change) {
        ObjectNode copy = manifest.deepCopy();
        change.accept((ObjectNode) copy.at(pointer));
        return copy;
    }
}

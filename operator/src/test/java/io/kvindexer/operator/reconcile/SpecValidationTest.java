package io.kvindexer.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.kvindexer.operator.crd.v1alpha1.Autoscaling;
import io.kvindexer.operator.crd.v1alpha1.BlockTtl;
import io.kvindexer.operator.crd.v1alpha1.KvIndexerSpec;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerSpec;
import io.kvindexer.operator.indexer.KvIndexerValidation;
import io.kvindexer.operator.support.Resources;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The first problem each validation names, field by field: the message the InvalidSpec condition carries. */
class SpecValidationTest {

    static Stream<Arguments> indexerSpecs() {
        return Stream.of(
                indexer("", s -> {}),
                indexer("spec.image is required", s -> s.setImage(" ")),
                indexer("spec.image is required", s -> s.setImage(null)),
                // what the schema's patterns refuse, stored where they were not checked (the API server would refuse
                // the StatefulSet's pod template)
                indexer(
                        "spec.image must not contain whitespace, got \"ghcr.io/kv-indexer/kv-indexer:0.1.0\n\"",
                        s -> s.setImage("ghcr.io/kv-indexer/kv-indexer:0.1.0\n")),
                indexer(
                        "spec.imagePullPolicy must be Always, IfNotPresent or Never, got always",
                        s -> s.setImagePullPolicy("always")),
                indexer("spec.replicas must be between 1 and 64, got 65", s -> s.setReplicas(65)),
                indexer("spec.replicas must be between 1 and 64, got null", s -> s.setReplicas(null)),
                indexer("spec.port must be between 1 and 65535, got 0", s -> s.setPort(0)),
                indexer("spec.threads must be 0 or more, got -1", s -> s.setThreads(-1)),
                indexer("spec.indexShards must be between 1 and 4, got 5", s -> s.setIndexShards(5)),
                indexer("spec.indexShards must be between 1 and 1, got 2", s -> {
                    s.setThreads(0);
                    s.setIndexShards(2);
                }),
                indexer("spec.minInitialWorkers must be 0 or more, got -2", s -> s.setMinInitialWorkers(-2)),
                indexer(
                        "spec.blockTtl.disk must be a duration above 0 like 500ms, 30s, 10m or 6h (at most"
                                + " 999999999999ms, 999999999s, 99999999m or 999999h), got 10 minutes",
                        s -> s.setBlockTtl(new BlockTtl("10m", null, "10 minutes", null))),
                indexer(
                        "spec.blockTtl.device must be a duration above 0 like 500ms, 30s, 10m or 6h (at most"
                                + " 999999999999ms, 999999999s, 99999999m or 999999h), got 0s",
                        s -> s.setBlockTtl(new BlockTtl("0s", null, null, null))),
                indexer("", s -> s.setBlockTtl(new BlockTtl("500ms", "30s", "10m", "6h"))),
                indexer("", s -> s.setBlockTtl(new BlockTtl("999999999999ms", "999999999s", "99999999m", "999999h"))),
                // the indexer refuses more than 2562047h (2^63-1 ns): the replicas would not start
                indexer(
                        "spec.blockTtl.external must be a duration above 0 like 500ms, 30s, 10m or 6h (at most"
                                + " 999999999999ms, 999999999s, 99999999m or 999999h), got 2562048h",
                        s -> s.setBlockTtl(new BlockTtl(null, null, null, "2562048h"))),
                indexer(
                        "spec.blockTtl.hostPinned must be a duration above 0 like 500ms, 30s, 10m or 6h (at most"
                                + " 999999999999ms, 999999999s, 99999999m or 999999h), got 9999999999s",
                        s -> s.setBlockTtl(new BlockTtl(null, "9999999999s", null, null))),
                indexer("spec.maxBlocksPerWorker must be 0 or more, got -1", s -> s.setMaxBlocksPerWorker(-1L)),
                indexer(
                        "spec.autoscaling: 1 <= minReplicas <= maxReplicas <= 64, got 3..2",
                        s -> s.setAutoscaling(new Autoscaling(3, 2, 50))));
    }

    static Stream<Arguments> workerSpecs() {
        return Stream.of(
                worker("", s -> {}),
                worker("spec.indexerRef is required", s -> s.setIndexerRef(null)),
                worker("spec.modelName is required", s -> s.setModelName("")),
                worker("spec.tenantId must not be empty", s -> s.setTenantId(" ")),
                worker(
                        "spec.modelName must be at most 256 characters, got 200000",
                        s -> s.setModelName("m".repeat(200_000))),
                worker("", s -> s.setModelName("😀".repeat(256))),
                worker(
                        "spec.tenantId must not contain control characters, got U+000A at character 4",
                        s -> s.setTenantId("team\nb")),
                worker(
                        "spec.modelName must not contain control characters, got U+0085 at character 0",
                        s -> s.setModelName("\u0085")),
                worker("spec.blockSize must be at least 1, got 0", s -> s.setBlockSize(0)),
                worker("spec.dataParallelSize must be at least 1, got null", s -> s.setDataParallelSize(null)),
                worker("spec.zmqPort must be between 1 and 65535, got 70000", s -> s.setZmqPort(70000)),
                worker("spec.zmqPort + dataParallelSize - 1 = 65536 exceeds 65535", s -> {
                    s.setZmqPort(65535);
                    s.setDataParallelSize(2);
                }),
                worker("spec.replayPort must be between 1 and 65535, got 0", s -> s.setReplayPort(0)),
                worker("spec.selector is required", s -> s.setSelector(null)),
                worker(
                        "spec.selector must have a matchLabels entry or a matchExpression: an empty one selects every"
                                + " pod of the namespace, the indexer replicas among them",
                        s -> s.setSelector(new LabelSelector())),
                worker(
                        "",
                        s -> s.setSelector(new LabelSelectorBuilder()
                                .addNewMatchExpression()
                                .withKey("app")
                                .withOperator("Exists")
                                .endMatchExpression()
                                .build())));
    }

    private static Arguments indexer(String problem, Consumer<KvIndexerSpec> change) {
        KvIndexerSpec spec = Resources.kvIndexer("llm", "kv", 2, 8090).getSpec();
        change.accept(spec);
        return Arguments.of(problem, spec);
    }

    private static Arguments worker(String problem, Consumer<KvWorkerSpec> change) {
        KvWorkerSpec spec = Resources.kvWorker("llm", "w", "kv", Map.of("app", "vllm"), "m", 16, 5557, 5600, 1)
                .getSpec();
        change.accept(spec);
        return Arguments.of(problem, spec);
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("indexerSpecs")
    void kvIndexerSpec(String problem, KvIndexerSpec spec) {
        assertThat(KvIndexerValidation.validate(spec)).isEqualTo(problem.isEmpty() ? null : problem);
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("workerSpecs")
    void kvWorkerSpec(String problem, KvWorkerSpec spec) {
        assertThat(KvWorkerValidation.validate(spec)).isEqualTo(problem.isEmpty() ? null : problem);
    }
}

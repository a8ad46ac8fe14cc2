package io.kvindexer.operator.support;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import io.javaoperatorsdk.operator.Operator;
import io.kvindexer.operator.OperatorSettings;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.indexer.IndexerNames;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Runs the real operator (the settings main uses) against a fabric8 CRUD mock API server, and plays the parts of
 * a cluster the mock lacks: it installs the generated CRDs and acts as the kubelet for pods.
 */
public final class OperatorHarness implements AutoCloseable {
    public static final Path GENERATED_CRDS = Path.of("target/classes/META-INF/fabric8");

    private final KubernetesClient client;
    private final Operator operator;
    private final PrometheusRegistry registry = new PrometheusRegistry();

    public OperatorHarness(KubernetesClient client, Duration resync) {
        this(client, OperatorSettings.defaults().withResync(resync));
    }

    public OperatorHarness(KubernetesClient client, OperatorSettings settings) {
        this.client = client;
        installCrds(client);
        this.operator = settings.createOperator(client, registry).operator();
        operator.start();
    }

    public static void installCrds(KubernetesClient client) {
        try (Stream<Path> files = Files.list(GENERATED_CRDS)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".yml")).toList()) {
                try (InputStream in = Files.newInputStream(f)) {
                    CustomResourceDefinition crd = client.apiextensions()
                            .v1()
                            .customResourceDefinitions()
                            .load(in)
                            .item();
                    if (client.apiextensions()
                                    .v1()
                                    .customResourceDefinitions()
                                    .withName(crd.getMetadata().getName())
                                    .get()
                            == null) {
                        client.apiextensions()
                                .v1()
                                .customResourceDefinitions()
                                .resource(crd)
                                .create();
                    }
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("generated CRDs not found under " + GENERATED_CRDS, e);
        }
    }

    public Operator operator() {
        return operator;
    }

    public PrometheusRegistry registry() {
        return registry;
    }

    public KvIndexer kvIndexer(String ns, String name) {
        return client.resources(KvIndexer.class).inNamespace(ns).withName(name).get();
    }

    public KvWorker kvWorker(String ns, String name) {
        return client.resources(KvWorker.class).inNamespace(ns).withName(name).get();
    }

    /** Plays the StatefulSet controller + kubelet: a replica pod with the template's labels, Ready at {@code ip}. */
    public Pod startReplicaPod(KvIndexer kvi, int ordinal, String ip) {
        ObjectMeta meta = new ObjectMetaBuilder()
                .withName(IndexerNames.pod(kvi, ordinal))
                .withNamespace(kvi.getMetadata().getNamespace())
                .withLabels(IndexerNames.labels(kvi))
                .build();
        return upsertPod(meta, ip, true);
    }

    /** Plays the kubelet for an engine pod. */
    public Pod startEnginePod(String ns, String name, Map<String, String> labels, String ip, boolean ready) {
        return upsertPod(
                new ObjectMetaBuilder()
                        .withName(name)
                        .withNamespace(ns)
                        .withLabels(labels)
                        .build(),
                ip,
                ready);
    }

    public Pod upsertPod(ObjectMeta meta, String ip, boolean ready) {
        Pod pod = new PodBuilder()
                .withMetadata(meta)
                .withNewSpec()
                .addNewContainer()
                .withName("main")
                .withImage("example")
                .endContainer()
                .endSpec()
                .withNewStatus()
                .withPhase("Running")
                .withPodIP(ip)
                .addNewCondition()
                .withType("Ready")
                .withStatus(ready ? "True" : "False")
                .endCondition()
                .endStatus()
                .build();
        return client.pods().inNamespace(meta.getNamespace()).resource(pod).createOr(NonDeletingOperation::update);
    }

    /** A JSON merge patch without resourceVersion (what {@code kubectl patch --type merge} sends). */
    public <T extends io.fabric8.kubernetes.api.model.HasMetadata> T mergePatch(
            Class<T> type, String ns, String name, String json) {
        return client.resources(type)
                .inNamespace(ns)
                .withName(name)
                .patch(
                        io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                                io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE),
                        json);
    }

    public void deletePod(String ns, String name) {
        client.pods().inNamespace(ns).withName(name).delete();
    }

    @Override
    public void close() {
        operator.stop();
    }
}

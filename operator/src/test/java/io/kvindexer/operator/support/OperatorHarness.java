package io.kvindexer.operator.support;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.javaoperatorsdk.operator.Operator;
import io.kvindexer.operator.OperatorSettings;
import io.kvindexer.operator.client.IndexerClient;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.observability.EventRecorder;
import io.kvindexer.operator.observability.OperatorMetrics;
import io.kvindexer.operator.reconcile.ControllerServices;
import io.kvindexer.operator.reconcile.Retention;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Runs the real operator (the settings main uses) against a fabric8 CRUD mock API server, and plays the parts of
 * a cluster the mock lacks: it installs the generated CRDs and acts as the kubelet for pods. The constructors start
 * it at once on a given client; {@link #onMockApiServer} makes one for all tests of a class, on a CRUD mock API
 * server of its own.
 */
public final class OperatorHarness implements AutoCloseable, BeforeAllCallback, AfterAllCallback {

    /**
     * How long an end-to-end step may take (a reconcile, a replica start, a registration): generous, since the tests
     * share a small machine. A test that waits for a longer chain (a rolling upgrade, an API server restart) sets its own.
     */
    public static final Duration WAIT = Duration.ofSeconds(60);

    /**
     * What a reconciler under test is built from: {@code indexers} as the indexer client, the {@code clock},
     * Events recorded to {@code client}, fresh metrics and a 30 s resync.
     */
    public static ControllerServices services(KubernetesClient client, IndexerClient indexers, Clock clock) {
        return new ControllerServices(
                indexers,
                clock,
                new EventRecorder(client, clock),
                new OperatorMetrics(new PrometheusRegistry()),
                Duration.ofSeconds(30));
    }

    /** The User-Agent of the operator's client on the harness's own mock. */
    static final String OPERATOR_AGENT = "kv-indexer-operator-under-test";

    public static final Path GENERATED_CRDS = Path.of("target/classes/META-INF/fabric8");

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final OperatorSettings settings;
    private KubernetesMockServer server;
    private KubernetesClient client;
    private KubernetesClient operatorClient;
    private Operator operator;
    private IndexerClient indexerClient;
    private Retention retention;

    public OperatorHarness(KubernetesClient client, Duration resync) {
        this(client, OperatorSettings.defaults().withResync(resync));
    }

    public OperatorHarness(KubernetesClient client, OperatorSettings settings) {
        this.settings = settings;
        start(client);
    }

    private OperatorHarness(OperatorSettings settings) {
        this.settings = settings;
    }

    /**
     * The operator for all tests of a class, as a {@code @RegisterExtension static} field: before the first test a
     * CRUD mock API server starts and the operator on it, after the last both stop.
     */
    public static OperatorHarness onMockApiServer(Duration resync) {
        return new OperatorHarness(OperatorSettings.defaults().withResync(resync));
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        server = new KubernetesMockServer(
                new Context(), new MockWebServer(), new HashMap<>(), new ApiServerDispatcher(), false);
        server.init();
        start(server.createClient());
    }

    @Override
    public void afterAll(ExtensionContext context) {
        close();
        operatorClient.close();
        client.close();
        server.destroy();
    }

    private void start(KubernetesClient on) {
        client = on;
        // on the harness's own mock, the operator's requests are told from the tests' by their User-Agent
        operatorClient = server == null
                ? on
                : new KubernetesClientBuilder()
                        .withConfig(new ConfigBuilder(on.getConfiguration())
                                .withUserAgent(OPERATOR_AGENT)
                                .build())
                        .build();
        installCrds(client);
        OperatorSettings.Wiring wiring = settings.createOperator(operatorClient, registry);
        operator = wiring.operator();
        indexerClient = wiring.indexerClient();
        retention = wiring.retention();
        operator.start();
    }

    /**
     * Every request the operator made (since the last look) is one docs/kubernetes.md's RBAC grants it
     * ({@link GrantedRbac}); on the harness's own mock only ({@link #onMockApiServer}).
     */
    public void assertRequestsGranted() {
        GrantedRbac.assertGranted(server, OPERATOR_AGENT);
    }

    /** The client of the API server the operator runs against. */
    public KubernetesClient client() {
        return client;
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

    /** What the running operator remembers per resource ({@link Retention#size}). */
    public Retention retention() {
        return retention;
    }

    public Operator operator() {
        return operator;
    }

    public PrometheusRegistry registry() {
        return registry;
    }

    /** Reconciliations of {@code kind} ({@code KvIndexer}, {@code KvWorker}) this operator has started so far. */
    public long reconciliations(String kind) {
        return (long) registry.scrape().stream()
                .filter(s -> s.getMetadata().getName().equals("kvindexer_operator_reconciliations"))
                .flatMap(s -> ((CounterSnapshot) s).getDataPoints().stream())
                .filter(p -> kind.equals(p.getLabels().get("kind")))
                .mapToDouble(CounterSnapshot.CounterDataPointSnapshot::getValue)
                .sum();
    }

    /**
     * Asserts {@code check} on every look (every 50 ms) until {@code period} has passed and this operator has started
     * {@code reconciles} more reconciliations of {@code kind}: what must hold throughout, not only in the end, and over
     * as many reconciles (resyncs) as the test counts on, even where a loaded machine fits fewer into the period. One
     * resource's reconciles never overlap: the n-th started means the one before it is done.
     */
    public void throughout(Duration period, String kind, int reconciles, Runnable check) throws InterruptedException {
        long target = reconciliations(kind) + reconciles;
        long start = System.nanoTime();
        while (System.nanoTime() - start < period.toNanos() || reconciliations(kind) < target) {
            check.run();
            if (System.nanoTime() - start > WAIT.toNanos()) {
                throw new AssertionError(reconciles + " reconciliations of " + kind + " not started within " + WAIT);
            }
            Thread.sleep(50);
        }
        check.run();
    }

    public KvIndexer kvIndexer(String ns, String name) {
        return client.resources(KvIndexer.class).inNamespace(ns).withName(name).get();
    }

    public KvWorker kvWorker(String ns, String name) {
        return client.resources(KvWorker.class).inNamespace(ns).withName(name).get();
    }

    /** The StatefulSet the operator wrote, or null. */
    public StatefulSet statefulSet(String ns, String name) {
        return client.apps().statefulSets().inNamespace(ns).withName(name).get();
    }

    /** The indexer container of a StatefulSet's pod template, as the operator wrote it (null: no StatefulSet yet). */
    public Container indexerContainer(String ns, String statefulSet) {
        StatefulSet sts = statefulSet(ns, statefulSet);
        return sts == null
                ? null
                : sts.getSpec().getTemplate().getSpec().getContainers().getFirst();
    }

    /** Creates {@code resource} in its own namespace (what {@code kubectl create} would). */
    public <T extends HasMetadata> T create(T resource) {
        return client.resource(resource)
                .inNamespace(resource.getMetadata().getNamespace())
                .create();
    }

    /**
     * Deletes every KvWorker of {@code ns} and waits until they are gone: their finalizer unregisters the engines
     * from every replica, so the replicas must still answer.
     */
    public void deleteKvWorkers(String ns, Duration wait) {
        client.resources(KvWorker.class).inNamespace(ns).delete();
        await().atMost(wait)
                .ignoreExceptions()
                .until(() -> client.resources(KvWorker.class)
                        .inNamespace(ns)
                        .list()
                        .getItems()
                        .isEmpty());
    }

    /** Plays the StatefulSet controller + kubelet: a replica pod with the template's labels, Ready at {@code ip}. */
    public Pod startReplicaPod(KvIndexer kvi, int ordinal, String ip) {
        return replicaPod(kvi, ordinal, ip, true);
    }

    /**
     * A replica pod with the template's labels at {@code ip}, Ready or not (starting, or being stopped); a pod that
     * exists keeps its spec (the same pod changing state), a new one gets a bare one.
     */
    public Pod replicaPod(KvIndexer kvi, int ordinal, String ip, boolean ready) {
        Pod existing = client.pods()
                .inNamespace(kvi.getMetadata().getNamespace())
                .withName(IndexerNames.pod(kvi, ordinal))
                .get();
        return replicaPod(kvi, ordinal, ip, ready, existing == null ? null : existing.getSpec());
    }

    /**
     * A replica pod as the StatefulSet controller makes it from a pod template: {@code spec} (null: a bare one), the
     * template's labels, at {@code ip}, Ready or not.
     */
    public Pod replicaPod(KvIndexer kvi, int ordinal, String ip, boolean ready, PodSpec spec) {
        ObjectMeta meta = new ObjectMetaBuilder()
                .withName(IndexerNames.pod(kvi, ordinal))
                .withNamespace(kvi.getMetadata().getNamespace())
                .withLabels(IndexerNames.labels(kvi))
                .build();
        Pod pod = pod(meta, ip, ready);
        if (spec != null) {
            pod.setSpec(spec);
        }
        return client.pods().inNamespace(meta.getNamespace()).resource(pod).createOr(NonDeletingOperation::update);
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
        return client.pods()
                .inNamespace(meta.getNamespace())
                .resource(pod(meta, ip, ready))
                .createOr(NonDeletingOperation::update);
    }

    /**
     * A running pod at {@code ip} with one container, Ready or not: what the kubelet would report (the Ready
     * condition's transition time is now).
     */
    public static Pod pod(ObjectMeta meta, String ip, boolean ready) {
        return new PodBuilder()
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
                .withLastTransitionTime(java.time.Instant.now()
                        .truncatedTo(java.time.temporal.ChronoUnit.SECONDS)
                        .toString())
                .endCondition()
                .endStatus()
                .build();
    }

    /** A JSON merge patch without resourceVersion (what {@code kubectl patch --type merge} sends). */
    public <T extends HasMetadata> T mergePatch(Class<T> type, String ns, String name, String json) {
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
        indexerClient.close();
    }
}

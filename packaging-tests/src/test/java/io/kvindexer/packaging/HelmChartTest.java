package io.kvindexer.packaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.indexer.IndexerNetworkPolicy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Lints and renders charts/kv-indexer-operator with the real Helm engine (helm-java) and checks the rendered
 * objects, parsed back as fabric8 Kubernetes objects, against what the chart and its docs promise.
 */
class HelmChartTest {

    private static final String RELEASE = "kvio";
    private static final String NAMESPACE = "kv-system";
    private static final String FULLNAME = "kvio-kv-indexer-operator";
    private static final String KUBE_VERSION = "1.31.0";

    @TempDir
    Path tmp;

    @Test
    void strictLintReportsNoWarningOrError() {
        LintResult result = new Helm(RepoFiles.chart()).lint().strict().call();

        assertThat(result.isFailed())
                .as("lint messages: %s", result.getMessages())
                .isFalse();
        assertThat(result.getMessages()).noneMatch(m -> m.contains("[WARNING]") || m.contains("[ERROR]"));
    }

    @Test
    void defaultsRenderAHardenedSingleReplicaOperatorWatchingAllNamespaces() {
        List<HasMetadata> objects = render(UnaryOperator.identity());

        Deployment deployment = only(objects, Deployment.class);
        assertThat(deployment.getMetadata().getName()).isEqualTo(FULLNAME);
        assertThat(deployment.getSpec().getReplicas()).isEqualTo(1);
        PodSpec pod = deployment.getSpec().getTemplate().getSpec();
        assertThat(pod.getServiceAccountName()).isEqualTo(FULLNAME);
        assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
        assertThat(pod.getSecurityContext().getRunAsUser()).isEqualTo(10001L);
        assertThat(pod.getSecurityContext().getSeccompProfile().getType()).isEqualTo("RuntimeDefault");

        Container operator = single(pod.getContainers());
        assertThat(operator.getImage()).isEqualTo("ghcr.io/kv-indexer/kv-indexer-operator:" + appVersion());
        assertHardened(operator);
        assertThat(operator.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/healthz");
        assertThat(operator.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/readyz");
        assertThat(operator.getLivenessProbe().getHttpGet().getPort().getStrVal())
                .isEqualTo("http");
        assertThat(operator.getReadinessProbe().getHttpGet().getPort().getStrVal())
                .isEqualTo("http");
        assertThat(single(operator.getPorts()).getContainerPort()).isEqualTo(8081);
        assertThat(operator.getArgs()).containsExactly("--probe-port", "8081", "--resync-seconds", "30");
        assertThat(operator.getResources().getRequests()).containsKeys("cpu", "memory");
        assertThat(operator.getResources().getLimits()).containsKey("memory");
        // the read-only root filesystem needs a writable /tmp for the JVM
        assertThat(operator.getVolumeMounts()).anyMatch(m -> m.getMountPath().equals("/tmp"));
        assertThat(pod.getVolumes()).anyMatch(v -> v.getEmptyDir() != null);

        Map<String, EnvVar> env = env(operator);
        assertThat(env.get("POD_NAME").getValueFrom().getFieldRef().getFieldPath())
                .isEqualTo("metadata.name");
        assertThat(env.get("POD_NAMESPACE").getValueFrom().getFieldRef().getFieldPath())
                .isEqualTo("metadata.namespace");
        assertThat(env.get("WATCH_NAMESPACES").getValue()).isEmpty();

        // all namespaces: cluster-wide rules exactly as documented, bound to the operator's ServiceAccount
        assertThat(only(objects, ServiceAccount.class).getMetadata().getName()).isEqualTo(FULLNAME);
        assertThat(ruleTriples(only(objects, ClusterRole.class).getRules())).isEqualTo(DocumentedRbac.watchRules());
        ClusterRoleBinding binding = only(objects, ClusterRoleBinding.class);
        assertThat(binding.getRoleRef().getName()).isEqualTo(FULLNAME);
        assertThat(single(binding.getSubjects()).getName()).isEqualTo(FULLNAME);
        assertThat(single(binding.getSubjects()).getNamespace()).isEqualTo(NAMESPACE);

        // leader election: a Role on leases in the release namespace only
        Role lease = only(objects, Role.class);
        assertThat(lease.getMetadata().getNamespace()).isEqualTo(NAMESPACE);
        assertThat(ruleTriples(lease.getRules())).isEqualTo(DocumentedRbac.leaseRules());
        assertThat(only(objects, RoleBinding.class).getRoleRef().getName())
                .isEqualTo(lease.getMetadata().getName());

        Service metrics = only(objects, Service.class);
        assertThat(single(metrics.getSpec().getPorts()).getName()).isEqualTo("http-metrics");
        assertThat(metrics.getSpec().getSelector())
                .isEqualTo(deployment.getSpec().getSelector().getMatchLabels());

        // (templates/tests/ is a helm test hook: helm-java's template returns the manifest without hooks, so
        // only strictLint renders it)
        // optional parts are off by default
        assertThat(objects).noneMatch(o -> o instanceof NetworkPolicy || o instanceof GenericKubernetesResource);
        assertThat(objects)
                .filteredOn(o -> !(o instanceof ClusterRole || o instanceof ClusterRoleBinding))
                .allMatch(o -> NAMESPACE.equals(o.getMetadata().getNamespace()));
        assertThat(objects)
                .allMatch(o -> RELEASE.equals(o.getMetadata().getLabels().get("app.kubernetes.io/instance")));
    }

    @Test
    void certManagerValueAddsExactlyTheDocumentedCertificateRule() throws IOException {
        Path values = tmp.resolve("cert-manager-values.yaml");
        Files.writeString(values, "certManager:\n  enabled: true\n");
        List<HasMetadata> objects = render(t -> t.withValuesFile(values));
        java.util.Set<String> expected = new java.util.TreeSet<>(DocumentedRbac.watchRules());
        expected.addAll(DocumentedRbac.certManagerRules());
        assertThat(DocumentedRbac.certManagerRules()).allMatch(r -> r.startsWith("cert-manager.io|certificates|"));
        assertThat(ruleTriples(only(objects, ClusterRole.class).getRules())).isEqualTo(expected);
    }

    @Test
    void nonDefaultValuesRenderNamespacedRbacAndTheOptionalParts() throws IOException {
        Path values = tmp.resolve("values.yaml");
        Files.writeString(values, """
                replicas: 2
                image:
                  repository: registry.example.com/ml/kv-indexer-operator
                  tag: "1.2.3"
                  pullPolicy: Always
                watchNamespaces: [kv-system, llm-prod]
                resources:
                  requests: {cpu: 250m, memory: 300Mi}
                  limits: {memory: 1Gi}
                metrics:
                  serviceMonitor:
                    enabled: true
                    labels: {release: kube-prometheus-stack}
                  prometheusRule:
                    enabled: true
                    labels: {release: kube-prometheus-stack}
                networkPolicy:
                  enabled: true
                  apiServerCidrs: [10.0.0.1/32]
                example:
                  enabled: true
                  replicas: 3
                """);
        List<HasMetadata> objects = render(t -> t.withValuesFile(values));

        Deployment deployment = only(objects, Deployment.class);
        assertThat(deployment.getSpec().getReplicas()).isEqualTo(2);
        Container operator = single(deployment.getSpec().getTemplate().getSpec().getContainers());
        assertThat(operator.getImage()).isEqualTo("registry.example.com/ml/kv-indexer-operator:1.2.3");
        assertThat(operator.getImagePullPolicy()).isEqualTo("Always");
        assertThat(operator.getResources().getLimits().get("memory").toString()).isEqualTo("1Gi");
        assertHardened(operator);
        assertThat(env(operator).get("WATCH_NAMESPACES").getValue()).isEqualTo("kv-system,llm-prod");

        // a list of namespaces: nothing cluster-wide, one Role + RoleBinding per watched namespace
        assertThat(objects).noneMatch(o -> o instanceof ClusterRole || o instanceof ClusterRoleBinding);
        List<Role> watchRoles = inEachWatchedNamespace(objects, Role.class);
        watchRoles.forEach(r -> assertThat(ruleTriples(r.getRules())).isEqualTo(DocumentedRbac.watchRules()));
        List<RoleBinding> watchBindings = inEachWatchedNamespace(objects, RoleBinding.class);
        watchBindings.forEach(
                b -> assertThat(single(b.getSubjects()).getNamespace()).isEqualTo(NAMESPACE));

        GenericKubernetesResource monitor = generic(objects, "ServiceMonitor");
        assertThat(monitor.getMetadata().getLabels()).containsEntry("release", "kube-prometheus-stack");
        assertThat(monitor.getApiVersion()).isEqualTo("monitoring.coreos.com/v1");

        // the alerts as the chart's file has them (PrometheusAlertsTest runs promtool over that file)
        GenericKubernetesResource alerts = generic(objects, "PrometheusRule");
        assertThat(alerts.getMetadata().getLabels()).containsEntry("release", "kube-prometheus-stack");
        assertThat(alerts.getMetadata().getNamespace()).isEqualTo(NAMESPACE);
        JsonNode shipped = new ObjectMapper(new YAMLFactory())
                .readTree(RepoFiles.chart()
                        .resolve("files/kv-indexer-alerts.yaml")
                        .toFile())
                .get("spec");
        JsonNode rendered =
                new ObjectMapper().valueToTree(alerts.getAdditionalProperties().get("spec"));
        assertThat(rendered).isEqualTo(shipped);

        NetworkPolicy policy = only(objects, NetworkPolicy.class);
        assertThat(policy.getSpec().getPolicyTypes()).containsExactlyInAnyOrder("Ingress", "Egress");
        assertThat(single(policy.getSpec().getIngress()).getPorts())
                .extracting(p -> p.getPort().getIntVal())
                .containsExactly(8081);
        assertThat(policy.getSpec().getEgress())
                .flatExtracting(e -> e.getPorts())
                .extracting(NetworkPolicyPort::getPort)
                .extracting(p -> p.getIntVal())
                .contains(53, 443, 6443, 8090);
        assertThat(policy.getSpec().getEgress())
                .flatExtracting(e -> e.getTo())
                .anyMatch(peer ->
                        peer.getIpBlock() != null && peer.getIpBlock().getCidr().equals("10.0.0.1/32"));

        GenericKubernetesResource indexer = generic(objects, "KvIndexer");
        assertThat(indexer.getApiVersion()).isEqualTo("kvindexer.io/v1alpha1");
        assertThat(indexer.getMetadata().getNamespace()).isEqualTo(NAMESPACE);
        assertThat(((Number) indexer.get("spec", "replicas")).intValue()).isEqualTo(3);
        GenericKubernetesResource worker = generic(objects, "KvWorker");
        assertThat((String) worker.get("spec", "indexerRef"))
                .isEqualTo(indexer.getMetadata().getName());
        assertThat(((Number) worker.get("spec", "replayPort")).intValue()).isEqualTo(5600);
    }

    /**
     * The operator's NetworkPolicy lets it call the example KvIndexer's replicas on the example's port, also when
     * that is not among networkPolicy.indexerPorts (each port once).
     */
    @Test
    void theOperatorsNetworkPolicyLetsItCallTheExamplesPort() {
        for (String port : List.of("9000", "8090")) {
            List<HasMetadata> objects = render(t -> t.set("networkPolicy.enabled", "true")
                    .set("example.enabled", "true")
                    .set("example.port", port));
            GenericKubernetesResource indexer = generic(objects, "KvIndexer");
            assertThat(((Number) indexer.get("spec", "port")).intValue()).isEqualTo(Integer.parseInt(port));
            assertThat(only(objects, NetworkPolicy.class)
                            .getSpec()
                            .getEgress()
                            .getLast()
                            .getPorts())
                    .as("the egress to the indexer replicas, example.port %s", port)
                    .extracting(p -> p.getPort().getIntVal())
                    .containsExactlyElementsOf(
                            port.equals("8090") ? List.of(8090) : List.of(8090, Integer.parseInt(port)));
        }
    }

    @Test
    void theChartsExampleResourcesValidateAgainstTheCrdSchemas() {
        CrdSchemas schemas = CrdSchemas.load(RepoFiles.chart().resolve("crds"));
        List<HasMetadata> objects = render(t -> t.set("example.enabled", "true"));

        List<GenericKubernetesResource> ours = all(objects, GenericKubernetesResource.class);
        assertThat(ours)
                .extracting(GenericKubernetesResource::getKind)
                .containsExactlyInAnyOrder("KvIndexer", "KvWorker");
        for (GenericKubernetesResource resource : ours) {
            com.fasterxml.jackson.databind.JsonNode tree = CrdSchemas.YAML.valueToTree(resource);
            assertThat(schemas.validate(tree))
                    .as("schema errors of the chart's example %s", resource.getKind())
                    .isEmpty();
        }
    }

    @Test
    void theExamplePassesPersistenceAndTheComebackTimesToItsResourcesWithinTheCrdSchemas() {
        CrdSchemas schemas = CrdSchemas.load(RepoFiles.chart().resolve("crds"));
        List<HasMetadata> objects = render(t -> t.set("example.enabled", "true")
                .set("example.persistence.size", "2Gi")
                .set("example.persistence.snapshotIntervalSeconds", "10")
                .set("example.worker.unregisterAfterSeconds", "90"));
        List<GenericKubernetesResource> ours = all(objects, GenericKubernetesResource.class);
        GenericKubernetesResource indexer = ours.stream()
                .filter(r -> r.getKind().equals("KvIndexer"))
                .findFirst()
                .orElseThrow();
        assertThat((String) indexer.get("spec", "persistence", "size")).isEqualTo("2Gi");
        assertThat(((Number) indexer.get("spec", "persistence", "snapshotIntervalSeconds")).intValue())
                .isEqualTo(10);
        assertThat(((Number) indexer.get("spec", "unregisterGraceSeconds")).intValue())
                .isEqualTo(120);
        GenericKubernetesResource worker = ours.stream()
                .filter(r -> r.getKind().equals("KvWorker"))
                .findFirst()
                .orElseThrow();
        assertThat(((Number) worker.get("spec", "unregisterAfterSeconds")).intValue())
                .isEqualTo(90);
        for (GenericKubernetesResource resource : ours) {
            assertThat(schemas.validate(CrdSchemas.YAML.valueToTree(resource))).isEmpty();
        }
    }

    @Test
    void theExamplePassesBlockExpiryToItsKvIndexerWithinTheCrdSchema() {
        CrdSchemas schemas = CrdSchemas.load(RepoFiles.chart().resolve("crds"));
        List<HasMetadata> objects = render(t -> t.set("example.enabled", "true")
                .set("example.blockTtl.hostPinned", "30m")
                .set("example.maxBlocksPerWorker", "200000"));
        GenericKubernetesResource indexer = all(objects, GenericKubernetesResource.class).stream()
                .filter(r -> r.getKind().equals("KvIndexer"))
                .findFirst()
                .orElseThrow();
        assertThat((String) indexer.get("spec", "blockTtl", "hostPinned")).isEqualTo("30m");
        assertThat(((Number) indexer.get("spec", "maxBlocksPerWorker")).longValue())
                .isEqualTo(200_000);
        assertThat(schemas.validate(CrdSchemas.YAML.valueToTree(indexer))).isEmpty();
        assertThat(all(render(t -> t.set("example.enabled", "true")), GenericKubernetesResource.class).stream()
                        .filter(r -> r.getKind().equals("KvIndexer"))
                        .findFirst()
                        .orElseThrow()
                        .getAdditionalProperties()
                        .get("spec"))
                .asString()
                .as("no expiry fields unless set")
                .doesNotContain("blockTtl", "maxBlocksPerWorker");
        assertThatThrownBy(() -> render(t -> t.set("example.enabled", "true").set("example.blockTtl.disk", "10")))
                .hasMessageContaining("blockTtl");
        // the CRD refuses a TTL the indexer would refuse as too large: so does the chart, before it installs anything
        assertThatThrownBy(() -> render(t -> t.set("example.enabled", "true").set("example.blockTtl.disk", "1000000h")))
                .hasMessageContaining("blockTtl");
        com.fasterxml.jackson.databind.node.ObjectNode tooLong = CrdSchemas.YAML.valueToTree(indexer);
        tooLong.withObjectProperty("spec").withObjectProperty("blockTtl").put("disk", "1000000h");
        assertThat(schemas.validate(tooLong)).as("the CRD's own refusal").anyMatch(e -> e.contains("blockTtl"));
    }

    /**
     * What helm install prints after it (NOTES.txt): the way to a replica is https with the KvIndexer's CA, as TLS is
     * on by default (plain http would be refused), to a name the certificate holds, and where the alerts and the
     * dashboard are.
     */
    @Test
    void theInstallNotesReachAReplicaOverTlsAndNameTheAlerts() {
        String notes = new Helm(RepoFiles.chart())
                .install()
                .withName(RELEASE)
                .withNamespace(NAMESPACE)
                .withKubeVersion(KUBE_VERSION)
                .clientOnly()
                .dryRun()
                .call()
                .getOutput();
        assertThat(notes)
                .contains(
                        "get secret <kvindexer-name>-tls -o jsonpath='{.data.ca\\.crt}' | base64 -d > kv-ca.crt",
                        "curl -s --cacert kv-ca.crt --resolve <kvindexer-name>:8090:127.0.0.1"
                                + " https://<kvindexer-name>:8090/workers",
                        "--set metrics.prometheusRule.enabled=true",
                        "docs/grafana/kv-indexer-dashboard.json")
                .doesNotContain("curl -s localhost:8090", "https://localhost");
    }

    /**
     * The `helm test` pod curls the operator; it must not pass for an operator pod: not selected by the operator's
     * Deployment, Service or NetworkPolicy (whose egress would then keep it from the operator's port), and not let
     * into the indexers by their NetworkPolicy, which admits the operator's pods by label.
     */
    @Test
    void theHelmTestPodIsNotTakenForAnOperatorPod() throws IOException {
        Path chart = tmp.resolve("chart");
        copy(RepoFiles.chart(), chart);
        // helm-java's template leaves hooks out: render the test pod as a plain template
        Path hook = chart.resolve("templates/tests/readyz.yaml");
        Files.writeString(
                hook,
                Files.readString(hook)
                        .lines()
                        .filter(l -> !l.contains("helm.sh/hook"))
                        .collect(Collectors.joining("\n")));
        List<HasMetadata> objects = RepoFiles.objects(new Helm(chart)
                .template()
                .withName(RELEASE)
                .withNamespace(NAMESPACE)
                .withKubeVersion(KUBE_VERSION)
                .set("networkPolicy.enabled", "true")
                .call());
        Map<String, String> test = only(objects, Pod.class).getMetadata().getLabels();
        Deployment deployment = only(objects, Deployment.class);
        Map<String, String> operator =
                deployment.getSpec().getTemplate().getMetadata().getLabels();

        Map<String, String> admittedAsOperator = admittedAsOperator();
        assertThat(operator).containsAllEntriesOf(admittedAsOperator);
        assertThat(test).doesNotContainEntry("app.kubernetes.io/component", "operator");
        assertThat(selects(admittedAsOperator, test))
                .as("the indexers' NetworkPolicy admits it")
                .isFalse();

        assertThat(selects(deployment.getSpec().getSelector().getMatchLabels(), test))
                .as("the Deployment selects it")
                .isFalse();
        assertThat(selects(only(objects, Service.class).getSpec().getSelector(), test))
                .as("the metrics Service selects it")
                .isFalse();
        assertThat(selects(
                        only(objects, NetworkPolicy.class)
                                .getSpec()
                                .getPodSelector()
                                .getMatchLabels(),
                        test))
                .as("the operator's NetworkPolicy selects it")
                .isFalse();
        assertThat(test).containsEntry("app.kubernetes.io/instance", RELEASE);
    }

    /**
     * {@code podLabels} that name the chart's own labels do not replace them: every KvIndexer's NetworkPolicy lets the
     * operator in by its component and part-of labels, and the Deployment selects its pods by name and instance, so
     * such a value shut the operator out of every replica (or left its pods unselected).
     */
    @Test
    void podLabelsAddToTheOperatorPodsLabelsButNeverReplaceTheChartsOwn() {
        Deployment deployment = only(
                render(t -> t.set("podLabels.app\\.kubernetes\\.io/component", "api")
                        .set("podLabels.app\\.kubernetes\\.io/part-of", "platform")
                        .set("podLabels.app\\.kubernetes\\.io/name", "mine")
                        .set("podLabels.team", "search")),
                Deployment.class);
        Map<String, String> labels =
                deployment.getSpec().getTemplate().getMetadata().getLabels();
        assertThat(labels)
                .containsAllEntriesOf(admittedAsOperator())
                .containsAllEntriesOf(deployment.getSpec().getSelector().getMatchLabels())
                .containsEntry("team", "search");
    }

    /** The labels a KvIndexer's NetworkPolicy admits the operator's pods by. */
    private static Map<String, String> admittedAsOperator() {
        KvIndexer kvi = new KvIndexer();
        kvi.setMetadata(new ObjectMetaBuilder()
                .withName("kv-indexer")
                .withNamespace("llm")
                .build());
        return IndexerNetworkPolicy.desired(kvi, List.of(), NAMESPACE)
                .getSpec()
                .getIngress()
                .getFirst()
                .getFrom()
                .getFirst()
                .getPodSelector()
                .getMatchLabels();
    }

    /**
     * Every chart value the docs name exists in values.yaml: the value table of kubernetes.md and every "the chart's
     * `x`" / "Helm value `x`" in the user-facing docs (the operator's environment is `extraEnv`, not `env`).
     */
    @Test
    void everyChartValueTheDocsNameExists() throws IOException {
        JsonNode values = new ObjectMapper(new YAMLFactory())
                .readTree(RepoFiles.chart().resolve("values.yaml").toFile());
        Pattern named = Pattern.compile("(?:chart's|chart value|Helm value)\\s+`([A-Za-z][\\w.]*)(?=[`:])");
        Pattern code = Pattern.compile("`([A-Za-z][\\w.]*)`");
        List<String> cited = new ArrayList<>();
        Path root = RepoFiles.root();
        List<Path> docs = new ArrayList<>(List.of(root.resolve("README.md")));
        try (var files = Files.list(root.resolve("docs"))) {
            files.filter(p -> p.toString().endsWith(".md"))
                    .filter(p -> !p.getFileName().toString().startsWith("benchmarks"))
                    .forEach(docs::add);
        }
        for (Path doc : docs) {
            Matcher m = named.matcher(RepoFiles.read(doc).replaceAll("\\s+", " "));
            while (m.find()) {
                cited.add(m.group(1));
            }
        }
        for (String[] row : RepoFiles.tableAfter("docs/kubernetes.md", "| value | default | meaning |")) {
            Matcher m = code.matcher(row[1]);
            while (m.find()) {
                cited.add(m.group(1));
            }
        }
        assertThat(cited).contains("watchNamespaces", "certManager.enabled", "networkPolicy.enabled");
        for (String value : cited) {
            JsonNode node = values;
            for (String key : value.split("\\.")) {
                node = node == null ? null : node.get(key);
            }
            assertThat(node).as("chart value `%s` named in the docs", value).isNotNull();
        }
    }

    /** With the example, the notes' commands reach it as they stand: its name, namespace, port and model. */
    @Test
    void theInstallNotesOfTheExampleNameItsOwnIndexer() {
        String notes = new Helm(RepoFiles.chart())
                .install()
                .withName(RELEASE)
                .withNamespace(NAMESPACE)
                .withKubeVersion(KUBE_VERSION)
                .set("example.enabled", "true")
                .set("example.name", "kvi-demo")
                .set("example.port", "9090")
                .clientOnly()
                .dryRun()
                .call()
                .getOutput();
        assertThat(notes)
                .contains(
                        "kubectl -n kv-system port-forward svc/kvi-demo 9090",
                        "kubectl -n kv-system get secret kvi-demo-tls",
                        "curl -s --cacert kv-ca.crt --resolve kvi-demo:9090:127.0.0.1 https://kvi-demo:9090/workers",
                        "\"model_name\":\"meta-llama/Llama-3.1-8B-Instruct\"")
                .doesNotContain("<kvindexer-name>", "<namespace>", "<model>");
    }

    @Test
    void withoutLeaderElectionThereIsNoLeaseRoleAndUpgradesRecreate() {
        List<HasMetadata> objects = render(t -> t.set("leaderElection.enabled", "false"));

        assertThat(all(objects, Role.class)).isEmpty();
        assertThat(all(objects, RoleBinding.class)).isEmpty();
        Deployment deployment = only(objects, Deployment.class);
        assertThat(deployment.getSpec().getStrategy().getType()).isEqualTo("Recreate");
        assertThat(single(deployment.getSpec().getTemplate().getSpec().getContainers())
                        .getArgs())
                .contains("--leader-election=false");
    }

    @Test
    void moreThanOneReplicaWithoutLeaderElectionIsRefused() {
        assertThatThrownBy(() -> render(t -> t.set("replicas", "2").set("leaderElection.enabled", "false")))
                .hasMessageContaining("leaderElection");
    }

    @Test
    void aServiceMonitorWithoutTheMetricsServiceIsRefused() {
        assertThatThrownBy(() -> render(
                        t -> t.set("metrics.serviceMonitor.enabled", "true").set("metrics.service.enabled", "false")))
                .hasMessageContaining("metrics.service.enabled");
    }

    @Test
    void theExampleOutsideTheWatchedNamespacesIsRefused() {
        assertThatThrownBy(() -> render(t -> t.set("example.enabled", "true").set("watchNamespaces[0]", "llm-prod")))
                .hasMessageContaining("not in watchNamespaces");
    }

    @Test
    void theValuesSchemaRejectsMisspelledKeysAndBadPorts() {
        assertThatThrownBy(() -> render(t -> t.set("replica", "2"))).hasMessageContaining("replica");
        assertThatThrownBy(() -> render(t -> t.set("httpPort", "70000"))).hasMessageContaining("httpPort");
        // at install time, not halfway through it when the API server refuses the KvIndexer (the CRD's maximum)
        assertThatThrownBy(() -> render(t -> t.set("example.enabled", "true").set("example.replicas", "65")))
                .hasMessageContaining("/example/replicas")
                .hasMessageContaining("64");
    }

    // ---- helpers

    private static boolean selects(Map<String, String> selector, Map<String, String> labels) {
        return labels.entrySet().containsAll(selector.entrySet());
    }

    private static void copy(Path from, Path to) throws IOException {
        try (var files = Files.walk(from)) {
            for (Path p : files.toList()) {
                Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(p, target);
                }
            }
        }
    }

    private List<HasMetadata> render(UnaryOperator<TemplateCommand> values) {
        TemplateCommand command = new Helm(RepoFiles.chart())
                .template()
                .withName(RELEASE)
                .withNamespace(NAMESPACE)
                .withKubeVersion(KUBE_VERSION);
        return RepoFiles.objects(values.apply(command).call());
    }

    private static void assertHardened(Container container) {
        var sc = container.getSecurityContext();
        assertThat(sc.getAllowPrivilegeEscalation()).isFalse();
        assertThat(sc.getReadOnlyRootFilesystem()).isTrue();
        assertThat(sc.getRunAsNonRoot()).isTrue();
        assertThat(sc.getCapabilities().getDrop()).containsExactly("ALL");
        assertThat(sc.getCapabilities().getAdd()).isNullOrEmpty();
        assertThat(sc.getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
        assertThat(sc.getPrivileged()).isNotEqualTo(Boolean.TRUE);
    }

    /** Rules flattened to "group|resource|verb" so that grouping differences do not matter, only the grants. */
    static Set<String> ruleTriples(List<PolicyRule> rules) {
        Set<String> triples = new TreeSet<>();
        for (PolicyRule rule : rules) {
            assertThat(rule.getResourceNames())
                    .as("no rule is limited by resourceNames")
                    .isNullOrEmpty();
            for (String group : rule.getApiGroups()) {
                for (String resource : rule.getResources()) {
                    for (String verb : rule.getVerbs()) {
                        assertThat(verb).as("no wildcard verbs").isNotEqualTo("*");
                        triples.add(group + "|" + resource + "|" + verb);
                    }
                }
            }
        }
        return triples;
    }

    private static String appVersion() {
        return RepoFiles.read(RepoFiles.chart().resolve("Chart.yaml"))
                .lines()
                .filter(l -> l.startsWith("appVersion:"))
                .findFirst()
                .orElseThrow()
                .substring("appVersion:".length())
                .strip()
                .replace("\"", "");
    }

    private static Map<String, EnvVar> env(Container container) {
        return container.getEnv().stream().collect(Collectors.toMap(EnvVar::getName, e -> e));
    }

    private static <T> List<T> all(List<HasMetadata> objects, Class<T> type) {
        return objects.stream().filter(type::isInstance).map(type::cast).toList();
    }

    /** The objects of {@code type} named {@link #FULLNAME}: one in each of the namespaces the values watch. */
    private static <T extends HasMetadata> List<T> inEachWatchedNamespace(List<HasMetadata> objects, Class<T> type) {
        List<T> found = all(objects, type).stream()
                .filter(o -> o.getMetadata().getName().equals(FULLNAME))
                .toList();
        assertThat(found)
                .extracting(o -> o.getMetadata().getNamespace())
                .containsExactlyInAnyOrder("kv-system", "llm-prod");
        return found;
    }

    private static <T> T only(List<HasMetadata> objects, Class<T> type) {
        List<T> found = all(objects, type);
        assertThat(found).as("exactly one %s", type.getSimpleName()).hasSize(1);
        return found.getFirst();
    }

    private static GenericKubernetesResource generic(List<HasMetadata> objects, String kind) {
        List<GenericKubernetesResource> found = all(objects, GenericKubernetesResource.class).stream()
                .filter(g -> kind.equals(g.getKind()))
                .toList();
        assertThat(found).as("exactly one %s", kind).hasSize(1);
        return found.getFirst();
    }

    private static <T> T single(List<T> list) {
        assertThat(list).hasSize(1);
        return list.getFirst();
    }
}

package io.kvindexer.operator.indexer;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSecurityContextBuilder;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.SecurityContextBuilder;
import io.fabric8.kubernetes.api.model.TolerationBuilder;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraint;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraintBuilder;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.PodTemplateOverrides;
import io.kvindexer.operator.support.Resources;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class IndexerDesiredStateTest {

    /** The flags every secured KvIndexer "kv" in "llm" (port 9000, 8 threads) starts with, then {@code more}. */
    private static String[] kvArgsThen(String... more) {
        List<String> args = new ArrayList<>(List.of(
                "--port",
                "9000",
                "--threads",
                "8",
                "--peers-dns",
                "kv-peers.llm.svc:9000",
                "--tls-cert-file",
                "/var/run/kv-indexer/tls/tls.crt",
                "--tls-key-file",
                "/var/run/kv-indexer/tls/tls.key",
                "--tls-ca-file",
                "/var/run/kv-indexer/tls/ca.crt",
                "--auth-token-file",
                "/var/run/kv-indexer/auth/token"));
        args.addAll(List.of(more));
        return args.toArray(String[]::new);
    }

    private static List<String> args(KvIndexer kvi) {
        return IndexerDesiredState.statefulSet(kvi)
                .getSpec()
                .getTemplate()
                .getSpec()
                .getContainers()
                .getFirst()
                .getArgs();
    }

    @Test
    void statefulSetCarriesSpecFlagsProbesAndPeers() {
        KvIndexer kvi = Resources.kvIndexer("llm", "kv", 3, 9000);
        kvi.getSpec().setThreads(8);
        kvi.getSpec().setMinInitialWorkers(2);
        var sts = IndexerDesiredState.statefulSet(kvi);
        assertThat(sts.getSpec().getReplicas()).isEqualTo(3);
        assertThat(sts.getSpec().getServiceName()).isEqualTo("kv-peers");
        assertThat(sts.getSpec().getSelector().getMatchLabels())
                .containsOnlyKeys("app.kubernetes.io/name", "app.kubernetes.io/instance");
        var c = sts.getSpec().getTemplate().getSpec().getContainers().getFirst();
        // peers come from the headless Service's name at startup: the same args for any number of replicas
        assertThat(c.getArgs()).containsExactly(kvArgsThen("--shutdown-delay", "5s", "--unregister-grace", "120s"));
        kvi.getSpec().setReplicas(5);
        assertThat(IndexerDesiredState.statefulSet(kvi).getSpec().getTemplate())
                .as("the pod template does not depend on replicas")
                .isEqualTo(sts.getSpec().getTemplate());
        kvi.getSpec().setIndexShards(2);
        assertThat(args(kvi))
                .as("--index-shards only when more than one")
                .containsExactly(
                        kvArgsThen("--index-shards", "2", "--shutdown-delay", "5s", "--unregister-grace", "120s"));
        kvi.getSpec().setUnregisterGraceSeconds(0);
        kvi.getSpec().setBlockTtl(new io.kvindexer.operator.crd.v1alpha1.BlockTtl(null, "30m", null, "6h"));
        kvi.getSpec().setMaxBlocksPerWorker(200_000L);
        assertThat(args(kvi))
                .as("a grace of 0 is the indexer's default: no flag")
                .doesNotContain("--unregister-grace", "--access-log")
                .endsWith(
                        "--index-shards",
                        "2",
                        "--shutdown-delay",
                        "5s",
                        "--block-ttl",
                        "host_pinned=30m,external=6h",
                        "--max-blocks-per-worker",
                        "200000");
        kvi.getSpec().setAccessLog(true);
        assertThat(args(kvi)).as("the access log on stdout").endsWith("--access-log", "/dev/stdout");
        assertThat(c.getEnv())
                .as("the token comes from the KvIndexer's own Secret, not the namespace-wide one")
                .containsExactly(
                        new io.fabric8.kubernetes.api.model.EnvVar("DYN_ROUTER_MIN_INITIAL_WORKERS", "2", null));
        assertThat(c.getReadinessProbe().getHttpGet().getScheme()).isEqualTo("HTTPS");
        assertThat(c.getPorts().getFirst().getContainerPort()).isEqualTo(9000);
        assertThat(c.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/health");
        assertThat(c.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/ready");
    }

    @Test
    void aSingleReplicaHasNoPeersFlag() {
        var c = IndexerDesiredState.statefulSet(Resources.kvIndexer("llm", "one", 1, 8090))
                .getSpec()
                .getTemplate()
                .getSpec()
                .getContainers()
                .getFirst();
        assertThat(c.getArgs()).doesNotContain("--peers");
        assertThat(c.getArgs())
                .as("still there: a later scale-up must not change the template")
                .containsSubsequence("--peers-dns", "one-peers.llm.svc:8090");
        assertThat(c.getEnv()).isEmpty();
    }

    @Test
    void securityOffLeavesPlainHttpAndTheNamespaceWideOptionalToken() {
        KvIndexer kvi = Resources.kvIndexer("llm", "kv", 2, 8090);
        kvi.getSpec()
                .setSecurity(new io.kvindexer.operator.crd.v1alpha1.Security(
                        new io.kvindexer.operator.crd.v1alpha1.Security.Tls(false, null),
                        new io.kvindexer.operator.crd.v1alpha1.Security.Auth(false)));
        var pod = IndexerDesiredState.statefulSet(kvi).getSpec().getTemplate().getSpec();
        var c = pod.getContainers().getFirst();
        assertThat(c.getArgs())
                .doesNotContain("--tls-cert-file", "--tls-key-file", "--tls-ca-file", "--auth-token-file");
        assertThat(c.getEnv()).containsExactly(AuthSecret.envVar());
        assertThat(c.getLivenessProbe().getHttpGet().getScheme()).isEqualTo("HTTP");
        assertThat(pod.getVolumes()).extracting(v -> v.getName()).containsExactly("tmp");
        assertThat(IndexerNames.stableUrl(kvi, 1)).isEqualTo("http://kv-1.kv-peers.llm.svc:8090");
    }

    @Test
    void podTemplateOverridesMergeButOurLabelsWin() {
        KvIndexer kvi = Resources.kvIndexer("llm", "kv", 2, 8090);
        kvi.getSpec()
                .setPodTemplate(new PodTemplateOverrides(
                        Map.of("team", "ml", "app.kubernetes.io/instance", "hijack"),
                        Map.of("a", "b"),
                        Map.of("gpu", "none"),
                        List.of(new TolerationBuilder()
                                .withKey("k")
                                .withOperator("Exists")
                                .build()),
                        null,
                        null,
                        null,
                        null,
                        null));
        var pod = IndexerDesiredState.statefulSet(kvi).getSpec().getTemplate();
        assertThat(pod.getMetadata().getLabels())
                .containsEntry("team", "ml")
                .containsEntry("app.kubernetes.io/instance", "kv");
        assertThat(pod.getMetadata().getAnnotations()).containsEntry("a", "b");
        assertThat(pod.getSpec().getNodeSelector()).containsEntry("gpu", "none");
        assertThat(pod.getSpec().getTolerations()).hasSize(1);
    }

    @Test
    void indexerPodsAreHardenedByDefault() {
        var pod = IndexerDesiredState.statefulSet(Resources.kvIndexer("llm", "kv", 2, 8090))
                .getSpec()
                .getTemplate()
                .getSpec();
        var psc = pod.getSecurityContext();
        assertThat(psc.getRunAsNonRoot()).isTrue();
        assertThat(psc.getRunAsUser()).isEqualTo(10001L);
        assertThat(psc.getRunAsGroup()).isEqualTo(10001L);
        assertThat(psc.getFsGroup()).isEqualTo(10001L);
        assertThat(psc.getSeccompProfile().getType()).isEqualTo("RuntimeDefault");

        var c = pod.getContainers().getFirst();
        var sc = c.getSecurityContext();
        assertThat(sc.getAllowPrivilegeEscalation()).isFalse();
        assertThat(sc.getReadOnlyRootFilesystem()).isTrue();
        assertThat(sc.getCapabilities().getDrop()).containsExactly("ALL");
        assertThat(sc.getCapabilities().getAdd()).isNullOrEmpty();
        assertThat(sc.getPrivileged()).isNull();

        // the JVM's writable /tmp: an emptyDir, mounted read-write; the token and certificate Secrets read-only
        assertThat(c.getVolumeMounts().getFirst()).satisfies(m -> {
            assertThat(m.getMountPath()).isEqualTo("/tmp");
            assertThat(m.getReadOnly()).isNotEqualTo(Boolean.TRUE);
            assertThat(pod.getVolumes().getFirst()).satisfies(v -> {
                assertThat(v.getName()).isEqualTo(m.getName());
                assertThat(v.getEmptyDir()).isNotNull();
            });
        });
        assertThat(c.getVolumeMounts().subList(1, 3))
                .allSatisfy(m -> assertThat(m.getReadOnly()).isTrue());
        assertThat(pod.getVolumes().subList(1, 3))
                .extracting(v -> v.getSecret().getSecretName())
                .containsExactly("kv-tls", "kv-auth");
    }

    /** Overrides of the two security contexts only. */
    private static PodTemplateOverrides securityContexts(PodSecurityContext pod, SecurityContext container) {
        return new PodTemplateOverrides(null, null, null, null, null, pod, container, null, null);
    }

    /**
     * The replicas spread over nodes and zones by default, softly (a small cluster still runs them all); the user's
     * constraints replace ours, and [] turns spreading off.
     */
    @Test
    void replicasSpreadOverNodesAndZonesUnlessTheUserSaysOtherwise() {
        KvIndexer kvi = Resources.kvIndexer("llm", "kv", 3, 8090);
        var spread = IndexerDesiredState.statefulSet(kvi)
                .getSpec()
                .getTemplate()
                .getSpec()
                .getTopologySpreadConstraints();
        assertThat(spread)
                .extracting(TopologySpreadConstraint::getTopologyKey)
                .containsExactly("kubernetes.io/hostname", "topology.kubernetes.io/zone");
        assertThat(spread).allSatisfy(c -> {
            assertThat(c.getMaxSkew()).isEqualTo(1);
            assertThat(c.getWhenUnsatisfiable()).isEqualTo("ScheduleAnyway");
            assertThat(c.getLabelSelector().getMatchLabels()).isEqualTo(IndexerNames.selectorLabels(kvi));
        });

        TopologySpreadConstraint strict = new TopologySpreadConstraintBuilder()
                .withMaxSkew(1)
                .withTopologyKey("kubernetes.io/hostname")
                .withWhenUnsatisfiable("DoNotSchedule")
                .build();
        for (List<TopologySpreadConstraint> theirs : List.of(List.of(strict), List.<TopologySpreadConstraint>of())) {
            kvi.getSpec()
                    .setPodTemplate(new PodTemplateOverrides(null, null, null, null, null, null, null, null, theirs));
            assertThat(IndexerDesiredState.statefulSet(kvi)
                            .getSpec()
                            .getTemplate()
                            .getSpec()
                            .getTopologySpreadConstraints())
                    .isEqualTo(theirs);
        }
    }

    /**
     * spec.shutdownDelaySeconds (default 5) becomes --shutdown-delay; a delay that leaves the stop less than 25 s of
     * Kubernetes' 30 s grace period grows the grace period with it; 0 passes no flag.
     */
    @Test
    void shutdownDelayBecomesTheFlagAndStretchesTheGracePeriod() {
        KvIndexer kvi = Resources.kvIndexer("llm", "kv", 2, 8090);
        assertThat(kvi.getSpec().getShutdownDelaySeconds()).isEqualTo(5);
        var pod = IndexerDesiredState.statefulSet(kvi).getSpec().getTemplate().getSpec();
        assertThat(pod.getContainers().getFirst().getArgs()).containsSubsequence("--shutdown-delay", "5s");
        assertThat(pod.getTerminationGracePeriodSeconds()).isNull();

        kvi.getSpec().setShutdownDelaySeconds(60);
        pod = IndexerDesiredState.statefulSet(kvi).getSpec().getTemplate().getSpec();
        assertThat(pod.getContainers().getFirst().getArgs()).containsSubsequence("--shutdown-delay", "60s");
        assertThat(pod.getTerminationGracePeriodSeconds()).isEqualTo(85L);

        kvi.getSpec().setShutdownDelaySeconds(0);
        pod = IndexerDesiredState.statefulSet(kvi).getSpec().getTemplate().getSpec();
        assertThat(pod.getContainers().getFirst().getArgs()).doesNotContain("--shutdown-delay");
        assertThat(pod.getTerminationGracePeriodSeconds()).isNull();

        kvi.getSpec().setShutdownDelaySeconds(301);
        assertThat(KvIndexerValidation.validate(kvi.getSpec())).contains("spec.shutdownDelaySeconds");
    }

    /**
     * spec.podTemplate.env reaches the indexer container (DYN_LOGGING_JSONL for its logs, say), before the
     * operator's own variables, which win over one of the same name; without it the env is what it was.
     */
    @Test
    void podTemplateEnvIsAddedButOursWin() {
        KvIndexer kvi = Resources.kvIndexer("llm", "kv", 2, 8090);
        kvi.getSpec().setMinInitialWorkers(2);
        List<EnvVar> before = IndexerDesiredState.container(kvi).getEnv();
        kvi.getSpec()
                .setPodTemplate(new PodTemplateOverrides(
                        null,
                        null,
                        null,
                        null,
                        null,
                        null,
                        null,
                        List.of(
                                new EnvVar("DYN_LOGGING_JSONL", "true", null),
                                new EnvVar("DYN_ROUTER_MIN_INITIAL_WORKERS", "0", null),
                                new EnvVar("DYN_LOG", "warn,io.kvindexer.indexer.ingest=info", null)),
                        null));
        List<EnvVar> env = IndexerDesiredState.container(kvi).getEnv();
        assertThat(before).contains(new EnvVar("DYN_ROUTER_MIN_INITIAL_WORKERS", "2", null));
        assertThat(env.subList(0, 2))
                .containsExactly(
                        new EnvVar("DYN_LOGGING_JSONL", "true", null),
                        new EnvVar("DYN_LOG", "warn,io.kvindexer.indexer.ingest=info", null));
        assertThat(env.subList(2, env.size())).isEqualTo(before);
    }

    @Test
    void podTemplateSecurityContextsReplaceTheDefaults() {
        KvIndexer kvi = Resources.kvIndexer("llm", "kv", 1, 8090);
        kvi.getSpec()
                .setPodTemplate(securityContexts(
                        new PodSecurityContextBuilder()
                                .withRunAsUser(2000L)
                                .withRunAsNonRoot(true)
                                .build(),
                        new SecurityContextBuilder()
                                .withReadOnlyRootFilesystem(false)
                                .build()));
        var pod = IndexerDesiredState.statefulSet(kvi).getSpec().getTemplate().getSpec();
        assertThat(pod.getSecurityContext().getRunAsUser()).isEqualTo(2000L);
        assertThat(pod.getSecurityContext().getFsGroup())
                .as("replaced as a whole, not merged")
                .isNull();
        var c = pod.getContainers().getFirst();
        assertThat(c.getSecurityContext().getReadOnlyRootFilesystem()).isFalse();
        assertThat(c.getSecurityContext().getCapabilities())
                .as("replaced as a whole, not merged")
                .isNull();
        assertThat(c.getVolumeMounts())
                .extracting(m -> m.getMountPath())
                .containsExactly("/tmp", "/var/run/kv-indexer/tls", "/var/run/kv-indexer/auth");

        // only one of the two given: the other keeps its default
        kvi.getSpec()
                .setPodTemplate(securityContexts(
                        null, new SecurityContextBuilder().withRunAsUser(3000L).build()));
        pod = IndexerDesiredState.statefulSet(kvi).getSpec().getTemplate().getSpec();
        assertThat(pod.getSecurityContext().getRunAsUser()).isEqualTo(10001L);
        assertThat(pod.getContainers().getFirst().getSecurityContext().getRunAsUser())
                .isEqualTo(3000L);
    }

    @Test
    void servicesAndPdb() {
        KvIndexer kvi = Resources.kvIndexer("llm", "kv", 2, 8090);
        var headless = IndexerDesiredState.headlessService(kvi);
        assertThat(headless.getMetadata().getName()).isEqualTo("kv-peers");
        assertThat(headless.getSpec().getClusterIP()).isEqualTo("None");
        assertThat(headless.getSpec().getPublishNotReadyAddresses()).isFalse();
        var svc = IndexerDesiredState.clientService(kvi);
        assertThat(svc.getMetadata().getName()).isEqualTo("kv");
        assertThat(svc.getSpec().getPorts().getFirst().getPort()).isEqualTo(8090);
        assertThat(svc.getMetadata().getLabels())
                .containsEntry("app.kubernetes.io/managed-by", "kv-indexer-operator")
                .containsEntry("app.kubernetes.io/part-of", "kv-indexer");
        var pdb = IndexerDesiredState.podDisruptionBudget(kvi);
        assertThat(pdb.getSpec().getMaxUnavailable().getIntVal()).isEqualTo(1);
        assertThat(pdb.getSpec().getSelector().getMatchLabels()).containsEntry("app.kubernetes.io/instance", "kv");
    }

    @Test
    void ordinalsAreReadFromPodNames() {
        KvIndexer kvi = Resources.kvIndexer("llm", "kv", 2, 8090);
        assertThat(IndexerNames.ordinalOf(kvi, "kv-1")).isEqualTo(1);
        assertThat(IndexerNames.ordinalOf(kvi, "kv-x")).isEqualTo(-1);
        assertThat(IndexerNames.ordinalOf(kvi, "other-0")).isEqualTo(-1);
    }

    @Test
    void persistenceIsAClaimPerReplicaMountedWhereTheSnapshotsGoAndAnExistingStatefulSetKeepsItsClaims() {
        KvIndexer kvi = Resources.kvIndexer("llm", "kv", 2, 8090);
        var plain = IndexerDesiredState.statefulSet(kvi);
        assertThat(plain.getSpec().getVolumeClaimTemplates()).isNullOrEmpty();
        assertThat(plain.getSpec()
                        .getTemplate()
                        .getSpec()
                        .getContainers()
                        .getFirst()
                        .getArgs())
                .doesNotContain("--snapshot-dir");

        kvi.getSpec()
                .setPersistence(new io.kvindexer.operator.crd.v1alpha1.Persistence(
                        new io.fabric8.kubernetes.api.model.Quantity("2Gi"), null, null));
        var sts = IndexerDesiredState.statefulSet(kvi);
        var claim = sts.getSpec().getVolumeClaimTemplates().getFirst();
        assertThat(claim.getMetadata().getName()).isEqualTo("state");
        assertThat(claim.getSpec().getStorageClassName())
                .as("the cluster's default")
                .isNull();
        var c = sts.getSpec().getTemplate().getSpec().getContainers().getFirst();
        assertThat(c.getArgs())
                .containsSubsequence("--snapshot-dir", "/var/lib/kv-indexer")
                .doesNotContain("--snapshot-interval");
        assertThat(c.getVolumeMounts()).extracting(m -> m.getMountPath()).contains("/var/lib/kv-indexer");
        assertThat(StateVolume.notApplied(kvi, sts, null)).isNull();

        // a StatefulSet created without the volume keeps it so (its claims cannot change), and that is said
        var effective = StateVolume.effective(kvi, plain);
        assertThat(effective).isEmpty();
        var kept = IndexerDesiredState.statefulSet(kvi, IndexerDesiredState.POD_MANAGEMENT, effective);
        assertThat(kept.getSpec().getVolumeClaimTemplates()).isNullOrEmpty();
        assertThat(kept.getSpec()
                        .getTemplate()
                        .getSpec()
                        .getContainers()
                        .getFirst()
                        .getArgs())
                .as("no mount, no snapshot flags")
                .doesNotContain("--snapshot-dir");
        assertThat(StateVolume.notApplied(kvi, plain, null))
                .startsWith("spec.persistence is not applied")
                .contains("kubectl delete statefulset kv --cascade=orphan");
        kvi.getSpec()
                .setPersistence(new io.kvindexer.operator.crd.v1alpha1.Persistence(
                        new io.fabric8.kubernetes.api.model.Quantity("1Gi"), null, 10));
        assertThat(StateVolume.notApplied(kvi, sts, null))
                .startsWith(
                        "spec.persistence (1Gi) is not applied: the replicas' volumes are 2Gi; a volume cannot shrink");
        kvi.getSpec()
                .setPersistence(new io.kvindexer.operator.crd.v1alpha1.Persistence(
                        new io.fabric8.kubernetes.api.model.Quantity("2Gi"), "fast", 10));
        assertThat(StateVolume.notApplied(kvi, sts, null))
                .startsWith("spec.persistence (2Gi, fast) is not applied: the replicas' volumes are 2Gi;")
                .contains("--cascade=orphan")
                .as("the claims made already stay: each is replaced by hand")
                .contains("kubectl delete pvc state-<pod> and the pod");
        assertThat(IndexerDesiredState.statefulSet(
                                kvi, IndexerDesiredState.POD_MANAGEMENT, StateVolume.effective(kvi, sts))
                        .getSpec()
                        .getTemplate()
                        .getSpec()
                        .getContainers()
                        .getFirst()
                        .getArgs())
                .containsSubsequence("--snapshot-dir", "/var/lib/kv-indexer", "--snapshot-interval", "10s");
    }
}

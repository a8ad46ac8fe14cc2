package io.kvindexer.operator.indexer;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSecurityContextBuilder;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.ProbeBuilder;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.SecurityContextBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraint;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraintBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscalerBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.kvindexer.operator.common.FormerPeers;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.common.IndexerSecurity;
import io.kvindexer.operator.crd.v1alpha1.Autoscaling;
import io.kvindexer.operator.crd.v1alpha1.CrdConstants;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.KvIndexerSpec;
import io.kvindexer.operator.crd.v1alpha1.PodTemplateOverrides;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Pure functions from a KvIndexer to the objects it owns. Owner references are added by JOSDK's dependents.
 * Objects are spelled out completely (no reliance on API-server defaults) because, with server-side apply off,
 * the dependents compare desired against actual field by field.
 */
public final class IndexerDesiredState {
    public static final String CONTAINER = IndexerNames.CONTAINER;
    public static final String PORT_NAME = "http";
    /** The indexer image's user and group (indexer/Dockerfile), so runAsNonRoot can be verified. */
    public static final long INDEXER_UID = 10001L;
    /** The JVM needs a writable /tmp; the root filesystem is read-only. */
    public static final String TMP_VOLUME = "tmp";

    private IndexerDesiredState() {}

    /**
     * Replicas are started and restarted one at a time, in order, each Ready (recovered from a peer) before the next:
     * {@code OrderedReady} scaling and a {@code RollingUpdate} from the highest ordinal down, with the
     * PodDisruptionBudget ({@code maxUnavailable: 1}) for voluntary evictions.
     */
    public static final String POD_MANAGEMENT = "OrderedReady";

    public static StatefulSet statefulSet(KvIndexer kvi) {
        return statefulSet(kvi, POD_MANAGEMENT);
    }

    public static StatefulSet statefulSet(KvIndexer kvi, String podManagementPolicy) {
        return statefulSet(kvi, podManagementPolicy, StateVolume.wanted(kvi));
    }

    /**
     * {@code podManagementPolicy} and {@code volumeClaims} are immutable on a StatefulSet: one created with another
     * policy (by an older operator) or other claims ({@link StateVolume}) keeps them, or every update would be
     * refused. The container mounts the state volume when the claims hold it.
     */
    public static StatefulSet statefulSet(
            KvIndexer kvi, String podManagementPolicy, List<PersistentVolumeClaim> volumeClaims) {
        return statefulSet(kvi, podManagementPolicy, volumeClaims, FormerPeers.NONE);
    }

    /**
     * With what a restarting replica needs to recover from the replicas that still serve as {@code spec.security}
     * said before ({@link FormerPeers}; {@link FormerPeers#NONE} once every replica serves as it says now).
     */
    public static StatefulSet statefulSet(
            KvIndexer kvi, String podManagementPolicy, List<PersistentVolumeClaim> volumeClaims, FormerPeers former) {
        KvIndexerSpec spec = kvi.getSpec();
        PodTemplateOverrides overrides = spec.getPodTemplate();
        Map<String, String> podLabels = new LinkedHashMap<>();
        Map<String, String> podAnnotations = new LinkedHashMap<>();
        if (overrides != null && overrides.labels() != null) {
            podLabels.putAll(overrides.labels());
        }
        if (overrides != null && overrides.annotations() != null) {
            podAnnotations.putAll(overrides.annotations());
        }
        podLabels.putAll(IndexerNames.labels(kvi)); // ours win: the selector must keep matching
        podLabels.put(IndexerNames.LABEL_SCHEME, IndexerSecurity.scheme(kvi)); // with the flags: ServiceMonitors
        return new StatefulSetBuilder()
                .withMetadata(meta(kvi, IndexerNames.statefulSet(kvi)))
                .withNewSpec()
                .withReplicas(spec.getReplicas())
                .withServiceName(IndexerNames.headlessService(kvi))
                .withPodManagementPolicy(podManagementPolicy)
                .withNewUpdateStrategy()
                .withType("RollingUpdate")
                .withNewRollingUpdate()
                .withPartition(0)
                .endRollingUpdate()
                .endUpdateStrategy()
                .withNewSelector()
                .withMatchLabels(IndexerNames.selectorLabels(kvi))
                .endSelector()
                .withNewTemplate()
                .withNewMetadata()
                .withLabels(podLabels)
                .withAnnotations(podAnnotations)
                .endMetadata()
                .withNewSpec()
                .withSecurityContext(
                        overrides != null && overrides.securityContext() != null
                                ? overrides.securityContext()
                                : podSecurityContext())
                .withContainers(container(kvi, StateVolume.mounted(volumeClaims), former))
                .withTerminationGracePeriodSeconds(terminationGrace(spec))
                .addNewVolume()
                .withName(TMP_VOLUME)
                .withNewEmptyDir()
                .endEmptyDir()
                .endVolume()
                .addAllToVolumes(IndexerSecurity.volumes(kvi))
                .addAllToVolumes(former.volumes())
                .withNodeSelector(overrides == null ? null : overrides.nodeSelector())
                .withTolerations(overrides == null ? null : overrides.tolerations())
                .withAffinity(overrides == null ? null : overrides.affinity())
                .withTopologySpreadConstraints(
                        overrides != null && overrides.topologySpreadConstraints() != null
                                ? overrides.topologySpreadConstraints()
                                : spread(kvi))
                .endSpec()
                .endTemplate()
                .withVolumeClaimTemplates(volumeClaims.isEmpty() ? null : volumeClaims)
                .endSpec()
                .build();
    }

    /**
     * The replicas apart, one node's or one zone's loss taking as few as it can: at most one more on a node (and in a
     * zone) than on another, as far as the scheduler can place them (ScheduleAnyway: a cluster with fewer nodes than
     * replicas still runs them all).
     */
    static List<TopologySpreadConstraint> spread(KvIndexer kvi) {
        return List.of("kubernetes.io/hostname", "topology.kubernetes.io/zone").stream()
                .map(key -> new TopologySpreadConstraintBuilder()
                        .withMaxSkew(1)
                        .withTopologyKey(key)
                        .withWhenUnsatisfiable("ScheduleAnyway")
                        .withNewLabelSelector()
                        .withMatchLabels(IndexerNames.selectorLabels(kvi))
                        .endLabelSelector()
                        .build())
                .toList();
    }

    private static int shutdownDelay(KvIndexerSpec spec) {
        return spec.getShutdownDelaySeconds() == null ? 0 : spec.getShutdownDelaySeconds();
    }

    /**
     * Kubernetes' 30 s (null: the template keeps its default) while the shutdown delay leaves 25 s for the stop
     * itself (the last snapshot, the listeners); a longer delay, that much more.
     */
    private static Long terminationGrace(KvIndexerSpec spec) {
        int delay = shutdownDelay(spec);
        return delay <= 5 ? null : (long) delay + 25;
    }

    /**
     * The indexer container. It finds its peers itself at startup ({@code --peers-dns}: the headless Service's name,
     * which resolves to the Ready replicas; a starting replica is not Ready, so never to itself) and recovers from the
     * first that answers. Nothing in the template depends on {@code replicas}: scaling never restarts a replica.
     */
    static Container container(KvIndexer kvi) {
        return container(kvi, false);
    }

    static Container container(KvIndexer kvi, boolean stateVolume) {
        return container(kvi, stateVolume, FormerPeers.NONE);
    }

    static Container container(KvIndexer kvi, boolean stateVolume, FormerPeers former) {
        KvIndexerSpec spec = kvi.getSpec();
        List<String> args = new ArrayList<>(List.of(
                "--port", String.valueOf(spec.getPort()),
                "--threads", String.valueOf(spec.getThreads()),
                "--peers-dns", IndexerNames.peersDns(kvi)));
        args.addAll(IndexerSecurity.args(kvi));
        args.addAll(former.args());
        if (spec.getIndexShards() != null && spec.getIndexShards() > 1) {
            // only when set: the pod template of a spec that does not use it stays as it was (no restart on upgrade)
            args.addAll(List.of("--index-shards", String.valueOf(spec.getIndexShards())));
        }
        if (shutdownDelay(spec) > 0) {
            args.addAll(List.of("--shutdown-delay", shutdownDelay(spec) + "s"));
        }
        if (spec.getUnregisterGraceSeconds() != null && spec.getUnregisterGraceSeconds() > 0) {
            args.addAll(List.of("--unregister-grace", spec.getUnregisterGraceSeconds() + "s"));
        }
        // block expiry flags only when set, like --index-shards
        if (spec.getBlockTtl() != null && !spec.getBlockTtl().flag().isEmpty()) {
            args.addAll(List.of("--block-ttl", spec.getBlockTtl().flag()));
        }
        if (spec.getMaxBlocksPerWorker() != null && spec.getMaxBlocksPerWorker() > 0) {
            args.addAll(List.of("--max-blocks-per-worker", String.valueOf(spec.getMaxBlocksPerWorker())));
        }
        if (Boolean.TRUE.equals(spec.getAccessLog())) {
            args.addAll(List.of("--access-log", "/dev/stdout")); // where kubectl logs and collectors read
        }
        if (stateVolume) {
            args.addAll(StateVolume.args(kvi));
        }
        List<EnvVar> ours = new ArrayList<>();
        if (!IndexerSecurity.authEnabled(kvi)) {
            ours.add(AuthSecret.envVar()); // the namespace-wide token of earlier versions, when the user made one
        }
        if (spec.getMinInitialWorkers() != null && spec.getMinInitialWorkers() > 0) {
            ours.add(new EnvVar("DYN_ROUTER_MIN_INITIAL_WORKERS", String.valueOf(spec.getMinInitialWorkers()), null));
        }
        List<EnvVar> env = new ArrayList<>();
        if (spec.getPodTemplate() != null && spec.getPodTemplate().env() != null) {
            Set<String> taken = ours.stream().map(EnvVar::getName).collect(Collectors.toSet());
            spec.getPodTemplate().env().stream()
                    .filter(e -> e != null && !taken.contains(e.getName()))
                    .forEach(env::add);
        }
        env.addAll(ours);
        return new ContainerBuilder()
                .withName(CONTAINER)
                .withImage(spec.getImage())
                .withImagePullPolicy(spec.getImagePullPolicy())
                .withArgs(args)
                .withEnv(env)
                .addNewPort()
                .withName(PORT_NAME)
                .withContainerPort(spec.getPort())
                .withProtocol("TCP")
                .endPort()
                .withLivenessProbe(probe("/health", 3, kvi))
                .withReadinessProbe(probe("/ready", 1, kvi))
                .withResources(spec.getResources())
                .withSecurityContext(
                        spec.getPodTemplate() != null && spec.getPodTemplate().containerSecurityContext() != null
                                ? spec.getPodTemplate().containerSecurityContext()
                                : containerSecurityContext())
                .addNewVolumeMount()
                .withName(TMP_VOLUME)
                .withMountPath("/tmp")
                .endVolumeMount()
                .addAllToVolumeMounts(
                        stateVolume
                                ? List.of(new io.fabric8.kubernetes.api.model.VolumeMountBuilder()
                                        .withName(StateVolume.NAME)
                                        .withMountPath(StateVolume.MOUNT_PATH)
                                        .build())
                                : List.of())
                .addAllToVolumeMounts(IndexerSecurity.mounts(kvi))
                .addAllToVolumeMounts(former.mounts())
                .build();
    }

    /** The hardened default, the same as the operator's own pod in the Helm chart. */
    static PodSecurityContext podSecurityContext() {
        return new PodSecurityContextBuilder()
                .withRunAsNonRoot(true)
                .withRunAsUser(INDEXER_UID)
                .withRunAsGroup(INDEXER_UID)
                .withFsGroup(INDEXER_UID)
                .withNewSeccompProfile()
                .withType("RuntimeDefault")
                .endSeccompProfile()
                .build();
    }

    static SecurityContext containerSecurityContext() {
        return new SecurityContextBuilder()
                .withAllowPrivilegeEscalation(false)
                .withReadOnlyRootFilesystem(true)
                .withNewCapabilities()
                .withDrop("ALL")
                .endCapabilities()
                .build();
    }

    /** The kubelet probes over HTTPS without checking the certificate, so TLS needs no trust set-up there. */
    private static Probe probe(String path, int failureThreshold, KvIndexer kvi) {
        return new ProbeBuilder()
                .withNewHttpGet()
                .withPath(path)
                .withPort(new IntOrString(PORT_NAME))
                .withScheme(IndexerSecurity.tlsEnabled(kvi) ? "HTTPS" : "HTTP")
                .endHttpGet()
                .withPeriodSeconds(5)
                .withTimeoutSeconds(2)
                .withFailureThreshold(failureThreshold)
                .build();
    }

    /** Headless: gives each replica {@code <pod>.<name>-peers.<ns>.svc}; only Ready pods are published. */
    public static Service headlessService(KvIndexer kvi) {
        return service(kvi, IndexerNames.headlessService(kvi), IndexerNames.ROLE_PEERS)
                .editSpec()
                .withClusterIP("None")
                .withPublishNotReadyAddresses(false)
                .endSpec()
                .build();
    }

    /** The client Service on {@code port}: what routers and users call. */
    public static Service clientService(KvIndexer kvi) {
        return service(kvi, IndexerNames.clientService(kvi), IndexerNames.ROLE_CLIENT)
                .editSpec()
                .withType("ClusterIP")
                .endSpec()
                .build();
    }

    /** What both Services share: the replicas' selector and the one named port. */
    private static ServiceBuilder service(KvIndexer kvi, String name, String serviceRole) {
        return new ServiceBuilder()
                .withMetadata(meta(kvi, name, serviceRole))
                .withNewSpec()
                .withSelector(IndexerNames.selectorLabels(kvi))
                .addNewPort()
                .withName(PORT_NAME)
                .withPort(kvi.getSpec().getPort())
                .withTargetPort(new IntOrString(PORT_NAME))
                .withProtocol("TCP")
                .endPort()
                .endSpec();
    }

    /** At most one replica voluntarily down at a time (only when there is more than one). */
    public static PodDisruptionBudget podDisruptionBudget(KvIndexer kvi) {
        return new PodDisruptionBudgetBuilder()
                .withMetadata(meta(kvi, IndexerNames.pdb(kvi)))
                .withNewSpec()
                .withMaxUnavailable(new IntOrString(1))
                .withNewSelector()
                .withMatchLabels(IndexerNames.selectorLabels(kvi))
                .endSelector()
                .endSpec()
                .build();
    }

    /**
     * {@code spec.autoscaling} as an autoscaling/v2 HorizontalPodAutoscaler on the KvIndexer's scale subresource: it
     * sets {@code spec.replicas}, the operator carries it to the StatefulSet as for any other change.
     */
    public static HorizontalPodAutoscaler horizontalPodAutoscaler(KvIndexer kvi) {
        Autoscaling a = kvi.getSpec().getAutoscaling();
        if (a == null) { // the field was removed: JOSDK asks for the desired object only to find the one to delete
            return new HorizontalPodAutoscalerBuilder()
                    .withMetadata(meta(kvi, IndexerNames.hpa(kvi)))
                    .build();
        }
        return new HorizontalPodAutoscalerBuilder()
                .withMetadata(meta(kvi, IndexerNames.hpa(kvi)))
                .withNewSpec()
                .withNewScaleTargetRef()
                .withApiVersion(CrdConstants.API_VERSION)
                .withKind(kvi.getKind())
                .withName(kvi.getMetadata().getName())
                .endScaleTargetRef()
                .withMinReplicas(a.minReplicas())
                .withMaxReplicas(a.maxReplicas())
                .addNewMetric()
                .withType("Resource")
                .withNewResource()
                .withName("cpu")
                .withNewTarget()
                .withType("Utilization")
                .withAverageUtilization(a.targetCPUUtilizationPercentage())
                .endTarget()
                .endResource()
                .endMetric()
                .endSpec()
                .build();
    }

    private static ObjectMeta meta(KvIndexer kvi, String name, String serviceRole) {
        ObjectMeta meta = meta(kvi, name);
        meta.getLabels().put(IndexerNames.LABEL_SERVICE_ROLE, serviceRole);
        return meta;
    }

    /** Name, namespace and the managed labels: every object a KvIndexer owns starts from this. */
    static ObjectMeta meta(KvIndexer kvi, String name) {
        return new ObjectMetaBuilder()
                .withName(name)
                .withNamespace(kvi.getMetadata().getNamespace())
                .withLabels(IndexerNames.labels(kvi))
                .build();
    }
}

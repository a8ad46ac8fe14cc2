package io.kvindexer.operator.indexer;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRuleBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeerBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPortBuilder;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerSpec;
import io.kvindexer.operator.crd.v1alpha1.NetworkPolicySettings;
import io.kvindexer.operator.reconcile.KvWorkerValidation;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * The NetworkPolicy of a KvIndexer's replicas. Ingress: the HTTP port, from the operator's pods, the other replicas
 * and {@code spec.networkPolicy.allowFrom}. Egress: each KvWorker's engine pods (that name this KvIndexer and whose
 * spec the operator accepts) on their event and replay ports (one port per data-parallel rank), the other replicas'
 * HTTP port (peer recovery), DNS, and {@code spec.networkPolicy.allowTo}.
 * Kubelet probes come from the node and are not subject to it on the common CNIs.
 */
public final class IndexerNetworkPolicy {
    /** Set by the Helm chart (downward API): where the operator's pods run. */
    public static final String OPERATOR_NAMESPACE_ENV = "POD_NAMESPACE";

    private IndexerNetworkPolicy() {}

    public static NetworkPolicy desired(KvIndexer kvi, List<KvWorker> workers, String operatorNamespace) {
        int port = kvi.getSpec().getPort();
        NetworkPolicySettings settings = kvi.getSpec().getNetworkPolicy();
        List<NetworkPolicyPeer> from = new ArrayList<>();
        from.add(operatorPods(operatorNamespace));
        from.add(replicas(kvi));
        if (settings != null && settings.allowFrom() != null) {
            from.addAll(settings.allowFrom());
        }
        List<NetworkPolicyEgressRule> egress = new ArrayList<>();
        workers.stream()
                .filter(w -> w.getSpec() != null
                        && kvi.getMetadata().getName().equals(w.getSpec().getIndexerRef())
                        // one the operator refuses registers nothing, and its ports or selector may be what the
                        // API server refuses in a policy (zmqPort + ranks above 65535): every write would fail
                        && KvWorkerValidation.validate(w.getSpec()) == null)
                .sorted(Comparator.comparing(w -> w.getMetadata().getName()))
                .forEach(w -> egress.add(engines(w.getSpec())));
        egress.add(new NetworkPolicyEgressRuleBuilder()
                .withTo(replicas(kvi))
                .withPorts(tcp(port, 1))
                .build());
        egress.add(new NetworkPolicyEgressRuleBuilder()
                .withPorts(
                        new NetworkPolicyPortBuilder()
                                .withProtocol("UDP")
                                .withPort(new IntOrString(53))
                                .build(),
                        tcp(53, 1))
                .build());
        if (settings != null && settings.allowTo() != null) {
            settings.allowTo().stream().map(IndexerNetworkPolicy::defaulted).forEach(egress::add);
        }
        return new NetworkPolicyBuilder()
                .withMetadata(IndexerDesiredState.meta(kvi, IndexerNames.statefulSet(kvi)))
                .withNewSpec()
                .withPodSelector(new LabelSelectorBuilder()
                        .withMatchLabels(IndexerNames.selectorLabels(kvi))
                        .build())
                .withPolicyTypes("Ingress", "Egress")
                .addNewIngress()
                .withFrom(from)
                .withPorts(tcp(port, 1))
                .endIngress()
                .withEgress(egress)
                .endSpec()
                .build();
    }

    /**
     * A copy of the user's {@code rule} with what the API server defaults in it (a port without a protocol is TCP):
     * the policy is matched exactly ({@link NetworkPolicyDependent#match}).
     */
    static NetworkPolicyEgressRule defaulted(NetworkPolicyEgressRule rule) {
        if (rule == null || rule.getPorts() == null) {
            return rule;
        }
        return new NetworkPolicyEgressRuleBuilder(rule)
                .withPorts(rule.getPorts().stream()
                        .map(p -> p == null || p.getProtocol() != null
                                ? p
                                : new NetworkPolicyPortBuilder(p)
                                        .withProtocol("TCP")
                                        .build())
                        .toList())
                .build();
    }

    /** The engine pods of one KvWorker on every rank's event port and, when set, replay port. */
    private static NetworkPolicyEgressRule engines(KvWorkerSpec w) {
        int ranks = w.getDataParallelSize() == null ? 1 : Math.max(1, w.getDataParallelSize());
        List<NetworkPolicyPort> ports = new ArrayList<>();
        ports.add(tcp(w.getZmqPort(), ranks));
        if (w.getReplayPort() != null) {
            ports.add(tcp(w.getReplayPort(), ranks));
        }
        LabelSelector engines = w.getSelector() == null ? new LabelSelector() : w.getSelector();
        return new NetworkPolicyEgressRuleBuilder()
                .withTo(new NetworkPolicyPeerBuilder().withPodSelector(engines).build())
                .withPorts(ports)
                .build();
    }

    private static NetworkPolicyPeer replicas(KvIndexer kvi) {
        return new NetworkPolicyPeerBuilder()
                .withPodSelector(new LabelSelectorBuilder()
                        .withMatchLabels(IndexerNames.selectorLabels(kvi))
                        .build())
                .build();
    }

    /** The chart's operator pods, in the operator's namespace (any namespace when it is not known). */
    private static NetworkPolicyPeer operatorPods(String operatorNamespace) {
        LabelSelector namespaces = operatorNamespace == null || operatorNamespace.isBlank()
                ? new LabelSelector()
                : new LabelSelectorBuilder()
                        .withMatchLabels(Map.of("kubernetes.io/metadata.name", operatorNamespace))
                        .build();
        return new NetworkPolicyPeerBuilder()
                .withNamespaceSelector(namespaces)
                .withPodSelector(new LabelSelectorBuilder()
                        .withMatchLabels(Map.of(
                                IndexerNames.LABEL_COMPONENT,
                                "operator",
                                IndexerNames.LABEL_PART_OF,
                                IndexerNames.APP_NAME))
                        .build())
                .build();
    }

    private static NetworkPolicyPort tcp(int port, int count) {
        NetworkPolicyPortBuilder b =
                new NetworkPolicyPortBuilder().withProtocol("TCP").withPort(new IntOrString(port));
        if (count > 1) {
            b.withEndPort(port + count - 1);
        }
        return b.build();
    }
}

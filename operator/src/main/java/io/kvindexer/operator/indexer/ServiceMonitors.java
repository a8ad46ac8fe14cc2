package io.kvindexer.operator.indexer;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The optional Prometheus Operator ServiceMonitor of a KvIndexer ({@code spec.serviceMonitor}): it scrapes
 * {@code /metrics} of every replica through the client Service. Written as a generic resource so the operator does
 * not need the Prometheus Operator's model; when its CRD is not installed the KvIndexer reports that (Degraded)
 * instead of failing.
 */
public final class ServiceMonitors {
    public static final String API_VERSION = "monitoring.coreos.com/v1";
    public static final String KIND = "ServiceMonitor";

    /** Spelled out: the client cannot discover a resource type its model does not know. */
    public static final ResourceDefinitionContext CONTEXT = new ResourceDefinitionContext.Builder()
            .withGroup("monitoring.coreos.com").withVersion("v1").withKind(KIND).withPlural("servicemonitors")
            .withNamespaced(true).build();

    private ServiceMonitors() {
    }

    public static GenericKubernetesResource desired(KvIndexer kvi) {
        Map<String, String> selector = new LinkedHashMap<>(IndexerNames.selectorLabels(kvi));
        selector.put(IndexerNames.LABEL_SERVICE_ROLE, IndexerNames.ROLE_CLIENT);
        return new GenericKubernetesResourceBuilder()
                .withApiVersion(API_VERSION)
                .withKind(KIND)
                .withNewMetadata()
                    .withName(kvi.getMetadata().getName())
                    .withNamespace(kvi.getMetadata().getNamespace())
                    .withLabels(IndexerNames.labels(kvi))
                    .withOwnerReferences(new OwnerReferenceBuilder()
                            .withApiVersion(kvi.getApiVersion()).withKind(kvi.getKind())
                            .withName(kvi.getMetadata().getName()).withUid(kvi.getMetadata().getUid())
                            .withController(true).withBlockOwnerDeletion(true).build())
                .endMetadata()
                .addToAdditionalProperties("spec", Map.of(
                        "selector", Map.of("matchLabels", selector),
                        "endpoints", List.of(Map.of("port", IndexerDesiredState.PORT_NAME, "path", "/metrics",
                                "interval", "30s"))))
                .build();
    }

    /** Creates/updates or removes the ServiceMonitor; returns null when all went well, else what went wrong. */
    public static String sync(KubernetesClient client, KvIndexer kvi) {
        var monitors = client.genericKubernetesResources(CONTEXT).inNamespace(kvi.getMetadata().getNamespace());
        try {
            if (Boolean.TRUE.equals(kvi.getSpec().getServiceMonitor())) {
                monitors.resource(desired(kvi)).createOr(NonDeletingOperation::update);
            } else if (monitors.withName(kvi.getMetadata().getName()).get() != null) {
                monitors.withName(kvi.getMetadata().getName()).delete();
            }
            return null;
        } catch (KubernetesClientException e) {
            if (e.getCode() == 404 && !Boolean.TRUE.equals(kvi.getSpec().getServiceMonitor())) {
                return null; // no ServiceMonitor CRD and none wanted: nothing to do
            }
            return "ServiceMonitor: " + (e.getCode() == 404
                    ? "the Prometheus Operator's ServiceMonitor CRD is not installed" : e.getMessage());
        }
    }
}

package io.kvindexer.operator.indexer;

import io.fabric8.kubernetes.api.model.APIResourceList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.common.IndexerSecurity;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The optional Prometheus Operator ServiceMonitor of a KvIndexer ({@code spec.serviceMonitor}): it scrapes
 * {@code /metrics} of every replica through the client Service (over HTTPS while the replicas serve it). A generic resource, so the operator does not need
 * the Prometheus Operator's model. Whether its CRD is installed is read from API discovery
 * ({@code /apis/monitoring.coreos.com/v1}, open to every authenticated client: no RBAC rule, no cluster-scoped read
 * of CRDs); a yes is kept, a no is asked again after {@link #RECHECK}.
 */
public final class ServiceMonitors {
    public static final String GROUP = "monitoring.coreos.com";
    public static final String VERSION = "v1";
    public static final String KIND = "ServiceMonitor";
    public static final String PLURAL = "servicemonitors";
    public static final String NOT_INSTALLED =
            "ServiceMonitor: the Prometheus Operator's ServiceMonitor CRD is not" + " installed";
    static final Duration RECHECK = Duration.ofSeconds(2); // one discovery call per API server: cheap

    /** Spelled out: the client cannot discover a resource type its model does not know. */
    public static final ResourceDefinitionContext CONTEXT = new ResourceDefinitionContext.Builder()
            .withGroup(GROUP)
            .withVersion(VERSION)
            .withKind(KIND)
            .withPlural(PLURAL)
            .withNamespaced(true)
            .build();

    /** API server URL → when the CRD was last found missing (absent key: never probed or found installed). */
    private static final Map<String, Instant> MISSING_SINCE = new ConcurrentHashMap<>();

    private static final Map<String, Boolean> INSTALLED = new ConcurrentHashMap<>();

    private ServiceMonitors() {}

    public static boolean wanted(KvIndexer kvi) {
        return kvi.getSpec() != null && Boolean.TRUE.equals(kvi.getSpec().getServiceMonitor());
    }

    /** The ServiceMonitor JOSDK creates or updates (it adds the owner reference itself). */
    public static ServiceMonitor desired(KvIndexer kvi) {
        Map<String, String> selector = new LinkedHashMap<>(IndexerNames.selectorLabels(kvi));
        selector.put(IndexerNames.LABEL_SERVICE_ROLE, IndexerNames.ROLE_CLIENT);
        ServiceMonitor monitor = new ServiceMonitor();
        monitor.setApiVersion(GROUP + "/" + VERSION);
        monitor.setKind(KIND);
        monitor.setMetadata(IndexerDesiredState.meta(kvi, kvi.getMetadata().getName()));
        monitor.setAdditionalProperty(
                "spec", Map.of("selector", Map.of("matchLabels", selector), "endpoints", List.of(endpoint(kvi))));
        return monitor;
    }

    /**
     * {@code /metrics} of each replica, in the scheme the replicas serve. With TLS the certificate is checked against
     * the CA of {@code <name>-tls} under the client Service's name: Prometheus scrapes the pod addresses, which the
     * certificate does not hold. No bearer token: {@code /metrics} is open even with authentication on.
     */
    static Map<String, Object> endpoint(KvIndexer kvi) {
        Map<String, Object> endpoint = new LinkedHashMap<>();
        endpoint.put("port", IndexerDesiredState.PORT_NAME);
        endpoint.put("path", "/metrics");
        endpoint.put("interval", "30s");
        endpoint.put("scheme", IndexerSecurity.scheme(kvi));
        if (IndexerSecurity.tlsEnabled(kvi)) {
            endpoint.put(
                    "tlsConfig",
                    Map.of(
                            "ca",
                                    Map.of(
                                            "secret",
                                            Map.of(
                                                    "name",
                                                    IndexerSecurity.tlsSecret(kvi),
                                                    "key",
                                                    IndexerSecurity.CA_KEY)),
                            "serverName", IndexerSecurity.serviceDnsName(kvi)));
        }
        return endpoint;
    }

    /** Whether the ServiceMonitor resource type exists on the API server {@code client} talks to. */
    public static boolean crdInstalled(KubernetesClient client) {
        String server = String.valueOf(client.getMasterUrl());
        if (Boolean.TRUE.equals(INSTALLED.get(server))) {
            return true;
        }
        Instant missing = MISSING_SINCE.get(server);
        if (missing != null && Instant.now().isBefore(missing.plus(RECHECK))) {
            return false;
        }
        boolean installed;
        try {
            APIResourceList resources = client.getApiResources(GROUP + "/" + VERSION);
            installed = resources != null
                    && resources.getResources() != null
                    && resources.getResources().stream().anyMatch(r -> PLURAL.equals(r.getName()));
        } catch (KubernetesClientException e) {
            if (e.getCode() != 404) {
                throw e;
            }
            installed = false;
        }
        if (installed) {
            INSTALLED.put(server, true);
            MISSING_SINCE.remove(server);
        } else {
            MISSING_SINCE.put(server, Instant.now());
        }
        return installed;
    }
}

package io.kvindexer.operator.indexer;

import io.fabric8.kubernetes.api.model.APIResourceList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.common.IndexerSecurity;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.reconcile.IndexerReplica;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The optional Prometheus Operator ServiceMonitor of a KvIndexer ({@code spec.serviceMonitor}): it scrapes
 * {@code /metrics} of every replica through the client Service, each in the scheme its pod serves. A generic resource, so the operator does not need
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
    private static final String HTTP = "http";
    private static final String HTTPS = "https";
    /**
     * {@link IndexerNames#LABEL_SCHEME} of the pod behind each target, as Prometheus's Kubernetes service discovery
     * names pod labels (every character not allowed in a label name becomes {@code _}).
     */
    static final String SCHEME_META_LABEL =
            "__meta_kubernetes_pod_label_" + IndexerNames.LABEL_SCHEME.replaceAll("[^a-zA-Z0-9_]", "_");

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

    /** The ServiceMonitor of {@code kvi} with no replica pod serving otherwise than its spec says. */
    public static ServiceMonitor desired(KvIndexer kvi) {
        return desired(kvi, List.of());
    }

    /**
     * The ServiceMonitor JOSDK creates or updates (it adds the owner reference itself): one endpoint per scheme the
     * replicas serve, each keeping only the pods whose {@link IndexerNames#LABEL_SCHEME} names it. The spec's scheme
     * always, also for pods without the label (made before the pod template had it, from a template of the same
     * spec); the other while a replica pod of {@code replicas} still serves it (a change of TLS rolling). The label
     * comes with the pod, so a restarted pod is scraped in its new scheme at once, without waiting for this
     * resource to change and Prometheus to reload it.
     */
    public static ServiceMonitor desired(KvIndexer kvi, Collection<IndexerReplica> replicas) {
        Map<String, String> selector = new LinkedHashMap<>(IndexerNames.selectorLabels(kvi));
        selector.put(IndexerNames.LABEL_SERVICE_ROLE, IndexerNames.ROLE_CLIENT);
        String scheme = IndexerSecurity.scheme(kvi);
        List<Map<String, Object>> endpoints = new ArrayList<>();
        endpoints.add(endpoint(kvi, scheme, scheme + "|"));
        boolean otherServed = replicas.stream()
                .map(IndexerReplica::served)
                .anyMatch(s -> s != null && !s.scheme().equals(scheme));
        if (otherServed) {
            String other = HTTPS.equals(scheme) ? HTTP : HTTPS;
            endpoints.add(endpoint(kvi, other, other));
        }
        ServiceMonitor monitor = new ServiceMonitor();
        monitor.setApiVersion(GROUP + "/" + VERSION);
        monitor.setKind(KIND);
        monitor.setMetadata(IndexerDesiredState.meta(kvi, kvi.getMetadata().getName()));
        monitor.setAdditionalProperty(
                "spec", Map.of("selector", Map.of("matchLabels", selector), "endpoints", endpoints));
        return monitor;
    }

    /**
     * {@code /metrics} of the replicas whose scheme label matches {@code keep} (a Prometheus regex, matched whole),
     * in {@code scheme}. With TLS the certificate is checked against the CA of {@code <name>-tls} under the client
     * Service's name: Prometheus scrapes the pod addresses, which the certificate does not hold. No bearer token:
     * {@code /metrics} is open even with authentication on.
     */
    static Map<String, Object> endpoint(KvIndexer kvi, String scheme, String keep) {
        Map<String, Object> endpoint = new LinkedHashMap<>();
        endpoint.put("port", IndexerDesiredState.PORT_NAME);
        endpoint.put("path", "/metrics");
        endpoint.put("interval", "30s");
        endpoint.put("scheme", scheme);
        if (HTTPS.equals(scheme)) {
            endpoint.put(
                    "tlsConfig",
                    Map.of(
                            "ca",
                            Map.of(
                                    "secret",
                                    Map.of("name", IndexerSecurity.tlsSecret(kvi), "key", IndexerSecurity.CA_KEY)),
                            "serverName",
                            IndexerSecurity.serviceDnsName(kvi)));
        }
        endpoint.put(
                "relabelings",
                List.of(Map.of("sourceLabels", List.of(SCHEME_META_LABEL), "regex", keep, "action", "keep")));
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

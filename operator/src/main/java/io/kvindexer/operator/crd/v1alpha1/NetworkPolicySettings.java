package io.kvindexer.operator.crd.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import java.util.List;

/**
 * {@code spec.networkPolicy}: the NetworkPolicy the operator keeps for the replicas (on when absent). Ingress to the
 * HTTP port from the operator, the other replicas and {@code allowFrom}; egress to the engines of the KvWorkers that
 * name this KvIndexer (event and replay ports), to the other replicas, to DNS and by {@code allowTo}.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public record NetworkPolicySettings(
        @JsonPropertyDescription("false: no NetworkPolicy; absent or true: the operator keeps one.")
        Boolean enabled,

        @JsonPropertyDescription("Who else may call the HTTP port (routers, dashboards): NetworkPolicy peers"
                + " (podSelector, namespaceSelector, ipBlock).")
        List<NetworkPolicyPeer> allowFrom,

        @JsonPropertyDescription("Where else the replicas may connect (an OpenTelemetry collector, say): NetworkPolicy"
                + " egress rules (to, ports), added to the engines, the other replicas and DNS.")
        List<NetworkPolicyEgressRule> allowTo) {}

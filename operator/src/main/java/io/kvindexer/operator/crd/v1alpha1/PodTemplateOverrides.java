package io.kvindexer.operator.crd.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.Affinity;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.Toleration;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraint;
import java.util.List;
import java.util.Map;

/**
 * What a user may merge into the indexer pods; the operator's own labels and containers always win. The two
 * security contexts, when given, replace the operator's hardened defaults as a whole (no field-by-field merge).
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
@JsonIgnoreProperties(ignoreUnknown = true)
public record PodTemplateOverrides(
        @JsonPropertyDescription("More labels of the indexer pods; the operator's own (app.kubernetes.io/name,"
                + " instance, component, part-of, managed-by and kvindexer.io/scheme) win over one of the same key.")
        Map<String, String> labels,

        @JsonPropertyDescription("Annotations of the indexer pods.")
        Map<String, String> annotations,

        @JsonPropertyDescription("Node labels a node must have to run an indexer pod (the pods' nodeSelector).")
        Map<String, String> nodeSelector,

        @JsonPropertyDescription("Taints the indexer pods tolerate.")
        List<Toleration> tolerations,

        @JsonPropertyDescription("Node and pod (anti-)affinity of the indexer pods.")
        Affinity affinity,

        @JsonPropertyDescription("Pod security context; replaces the default (runAsNonRoot, UID/GID/fsGroup 10001,"
                + " seccomp RuntimeDefault) as a whole.")
        PodSecurityContext securityContext,

        @JsonPropertyDescription("Security context of the indexer container; replaces the default (no privilege"
                + " escalation, read-only root filesystem, all capabilities dropped) as a whole.")
        SecurityContext containerSecurityContext,

        @JsonPropertyDescription("More environment variables of the indexer container, e.g. DYN_LOGGING_JSONL=true"
                + " or DYN_LOG=warn for its logs. The operator's own (DYN_ROUTER_MIN_INITIAL_WORKERS from"
                + " minInitialWorkers, KV_INDEXER_AUTH_TOKEN) win over one of the same name; JAVA_TOOL_OPTIONS"
                + " here replaces the image's.")
        List<EnvVar> env,

        @JsonPropertyDescription("How the replicas spread over nodes and zones; replaces the default as a whole (at"
                + " most one replica more on a node, and in a zone, than on another, where the scheduler can:"
                + " ScheduleAnyway), and [] spreads them not at all.")
        List<TopologySpreadConstraint> topologySpreadConstraints) {}

package io.kvindexer.operator.crd.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;

/**
 * {@code spec.autoscaling}: the operator owns an autoscaling/v2 HorizontalPodAutoscaler that scales the KvIndexer
 * through its scale subresource on the replicas' CPU (the container needs a CPU request).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public record Autoscaling(
        @JsonPropertyDescription("Fewest replicas the autoscaler keeps.") @Required @Min(1) @Max(64)
        Integer minReplicas,

        @JsonPropertyDescription("Most replicas the autoscaler runs; at least minReplicas.") @Required @Min(1) @Max(64)
        Integer maxReplicas,

        @JsonPropertyDescription("Average CPU utilisation (percent of the CPU request) the autoscaler aims at.")
        @Required
        @Min(1)
        @Max(100)
        Integer targetCPUUtilizationPercentage) {}

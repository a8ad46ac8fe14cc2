package io.kvindexer.operator.crd.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;
import io.fabric8.kubernetes.api.model.Quantity;

/**
 * {@code spec.persistence}: each replica gets a volume of its own (a claim of the StatefulSet's
 * {@code volumeClaimTemplates}) and writes its snapshot there ({@code --snapshot-dir}), so that a replica with no
 * peer left to recover from (a single replica, or all restarted at once) comes back with its index.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public record Persistence(
        @JsonPropertyDescription(
                "Size of each replica's volume, e.g. 2Gi: room for three snapshots of the index (two kept, one being written; 10-30 bytes a membership each).")
        @Required
        Quantity size,

        @JsonPropertyDescription("StorageClass of the volumes. Unset: the cluster's default StorageClass.")
        String storageClassName,

        @JsonPropertyDescription("Seconds between two snapshots (--snapshot-interval). Unset: the indexer's default.")
        @Min(1)
        Integer snapshotIntervalSeconds) {}

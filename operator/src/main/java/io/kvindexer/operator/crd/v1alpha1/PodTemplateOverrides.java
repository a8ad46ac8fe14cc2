package io.kvindexer.operator.crd.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.kubernetes.api.model.Affinity;
import io.fabric8.kubernetes.api.model.Toleration;
import java.util.List;
import java.util.Map;

/** What a user may merge into the indexer pods; the operator's own labels and containers always win. */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record PodTemplateOverrides(
        Map<String, String> labels,
        Map<String, String> annotations,
        Map<String, String> nodeSelector,
        List<Toleration> tolerations,
        Affinity affinity) {
}

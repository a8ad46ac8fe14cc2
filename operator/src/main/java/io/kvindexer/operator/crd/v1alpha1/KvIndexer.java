package io.kvindexer.operator.crd.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.crd.generator.annotation.SchemaSwap;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

/** A set of indexer replicas that know each other (a StatefulSet, its Services and PodDisruptionBudget). */
@Group(CrdConstants.GROUP)
@Version(CrdConstants.VERSION)
@Plural("kvindexers")
@ShortNames("kvi")
@AdditionalPrinterColumn(name = "Ready", jsonPath = ".status.ready", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
        name = "Age",
        jsonPath = ".metadata.creationTimestamp",
        type = AdditionalPrinterColumn.Type.DATE)
@JsonIgnoreProperties(ignoreUnknown = true) // a root field of a newer CRD must not stop the informer
@SchemaSwap(originalType = KvIndexerSpec.class, fieldName = "unknown", targetType = void.class) // not a field
public class KvIndexer extends CustomResource<KvIndexerSpec, KvIndexerStatus> implements Namespaced {

    /** Read leniently: a spec this operator cannot read is reported on this object, never fails its informer. */
    @Override
    @JsonDeserialize(using = LenientSpec.class)
    public void setSpec(KvIndexerSpec spec) {
        super.setSpec(spec);
    }

    @Override
    @JsonSerialize(using = LenientSpec.Writer.class)
    public KvIndexerSpec getSpec() {
        return super.getSpec();
    }

    /** Read leniently: a status this operator cannot read is dropped (the next reconcile writes a new one). */
    @Override
    @JsonDeserialize(using = LenientStatus.class)
    public void setStatus(KvIndexerStatus status) {
        super.setStatus(status);
    }

    @Override
    protected KvIndexerSpec initSpec() {
        return new KvIndexerSpec();
    }
}

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

/** Engine pods (selected by labels) that the operator registers with every replica of a KvIndexer. */
@Group(CrdConstants.GROUP)
@Version(CrdConstants.VERSION)
@Plural("kvworkers")
@ShortNames("kvw")
@AdditionalPrinterColumn(name = "Indexer", jsonPath = ".spec.indexerRef", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Pods", jsonPath = ".status.matchedPods", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(
        name = "Registered",
        jsonPath = ".status.registeredPods",
        type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(
        name = "Age",
        jsonPath = ".metadata.creationTimestamp",
        type = AdditionalPrinterColumn.Type.DATE)
@JsonIgnoreProperties(ignoreUnknown = true) // a root field of a newer CRD must not stop the informer
@SchemaSwap(originalType = KvWorkerSpec.class, fieldName = "unknown", targetType = void.class) // not a field
public class KvWorker extends CustomResource<KvWorkerSpec, KvWorkerStatus> implements Namespaced {

    /** Read leniently: a spec this operator cannot read is reported on this object, never fails its informer. */
    @Override
    @JsonDeserialize(using = LenientSpec.class)
    public void setSpec(KvWorkerSpec spec) {
        super.setSpec(spec);
    }

    @Override
    @JsonSerialize(using = LenientSpec.Writer.class)
    public KvWorkerSpec getSpec() {
        return super.getSpec();
    }

    /** Read leniently: a status this operator cannot read is dropped (the next reconcile writes a new one). */
    @Override
    @JsonDeserialize(using = LenientStatus.class)
    public void setStatus(KvWorkerStatus status) {
        super.setStatus(status);
    }

    @Override
    protected KvWorkerSpec initSpec() {
        return new KvWorkerSpec();
    }
}

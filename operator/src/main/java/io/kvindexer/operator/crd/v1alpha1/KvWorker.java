package io.kvindexer.operator.crd.v1alpha1;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.crd.generator.annotation.SchemaSwap;
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
// the Ready condition's reason (AllRegistered, Registering, IndexerNotFound, InvalidSpec, ...), as a pod's STATUS
@AdditionalPrinterColumn(
        name = "Status",
        jsonPath = ".status.conditions[?(@.type==\"Ready\")].reason",
        type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
        name = "Age",
        jsonPath = ".metadata.creationTimestamp",
        type = AdditionalPrinterColumn.Type.DATE)
@SchemaSwap(originalType = KvWorkerSpec.class, fieldName = "unknown", targetType = void.class) // not a field
public class KvWorker extends LenientResource<KvWorkerSpec, KvWorkerStatus> {

    @Override
    protected KvWorkerSpec initSpec() {
        return new KvWorkerSpec();
    }
}

package io.kvindexer.operator.crd.v1alpha1;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.crd.generator.annotation.SchemaSwap;
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
// the Ready condition's reason, as a pod's STATUS: why it is not Ready, where READY alone shows only a count
@AdditionalPrinterColumn(
        name = "Status",
        jsonPath = ".status.conditions[?(@.type==\"Ready\")].reason",
        type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
        name = "Age",
        jsonPath = ".metadata.creationTimestamp",
        type = AdditionalPrinterColumn.Type.DATE)
@SchemaSwap(originalType = KvIndexerSpec.class, fieldName = "unknown", targetType = void.class) // not a field
public class KvIndexer extends LenientResource<KvIndexerSpec, KvIndexerStatus> {

    @Override
    protected KvIndexerSpec initSpec() {
        return new KvIndexerSpec();
    }
}

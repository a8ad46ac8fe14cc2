package io.kvindexer.operator.indexer;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * The Prometheus Operator's ServiceMonitor, known by name only (its fields stay untyped, in the additional
 * properties): a type of our own lets the client address it without API discovery, which fails for a type the
 * cluster lacks, before the activation condition has had a say. Not a CustomResource, so no CRD is generated.
 */
@Group(ServiceMonitors.GROUP)
@Version(ServiceMonitors.VERSION)
@Kind(ServiceMonitors.KIND)
@Plural(ServiceMonitors.PLURAL)
public class ServiceMonitor extends GenericKubernetesResource implements Namespaced {}

package io.kvindexer.operator.crd.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;

/**
 * What the operator's custom resources share: they are read leniently, so that one object this operator cannot read
 * never fails its informer, and with it the work on every other object of its kind. A root field of a newer CRD is
 * ignored; a spec that cannot be read is reported on its object ({@link LenientSpec}); a status that cannot be read
 * is dropped, and the next reconcile writes a new one ({@link LenientStatus}).
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public abstract class LenientResource<S extends UnknownFields, T> extends CustomResource<S, T> implements Namespaced {

    @Override
    @JsonDeserialize(using = LenientSpec.class)
    public void setSpec(S spec) {
        super.setSpec(spec);
    }

    @Override
    @JsonSerialize(using = LenientSpec.Writer.class)
    public S getSpec() {
        return super.getSpec();
    }

    @Override
    @JsonDeserialize(using = LenientStatus.class)
    public void setStatus(T status) {
        super.setStatus(status);
    }
}

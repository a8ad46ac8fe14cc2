package io.kvindexer.operator.crd.v1alpha1;

import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the {@code status} of a custom resource without ever failing the read of the resource: a status this operator
 * cannot read (written by another version in another shape) reads as none, and the next reconcile writes a new one.
 * The status is the operator's own output, so nothing of the user's is lost (see {@link LenientSpec} for the spec).
 */
public final class LenientStatus extends LenientReader<Object> {
    private static final Logger LOG = LoggerFactory.getLogger(LenientStatus.class);

    public LenientStatus() {
        this(null);
    }

    private LenientStatus(JavaType type) {
        super(type);
    }

    @Override
    LenientStatus forType(JavaType type) {
        return new LenientStatus(type);
    }

    @Override
    Object unreadable(JsonNode written, Exception e) {
        LOG.atWarn()
                .addKeyValue("type", type.getRawClass().getSimpleName())
                .addKeyValue("problem", LenientSpec.describe("status", e))
                .log("status not readable; read as none, the next reconcile writes a new one");
        return null;
    }
}

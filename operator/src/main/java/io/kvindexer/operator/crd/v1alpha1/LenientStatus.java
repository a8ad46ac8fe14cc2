package io.kvindexer.operator.crd.v1alpha1;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.BeanProperty;
import com.fasterxml.jackson.databind.DatabindException;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.deser.ContextualDeserializer;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the {@code status} of a custom resource without ever failing the read of the resource: a status this operator
 * cannot read (written by another version in another shape) reads as none, and the next reconcile writes a new one.
 * The status is the operator's own output, so nothing of the user's is lost (see {@link LenientSpec} for the spec).
 */
public final class LenientStatus extends JsonDeserializer<Object> implements ContextualDeserializer {
    private static final Logger LOG = LoggerFactory.getLogger(LenientStatus.class);
    private final JavaType type;

    public LenientStatus() {
        this(null);
    }

    private LenientStatus(JavaType type) {
        this.type = type;
    }

    @Override
    public JsonDeserializer<?> createContextual(DeserializationContext ctxt, BeanProperty property) {
        return new LenientStatus(property != null ? property.getType() : ctxt.getContextualType());
    }

    @Override
    public Object deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
        JsonNode written = ctxt.readTree(p);
        try {
            return ctxt.readTreeAsValue(written, type);
        } catch (DatabindException | IllegalArgumentException | ArithmeticException e) {
            LOG.atWarn()
                    .addKeyValue("type", type.getRawClass().getSimpleName())
                    .addKeyValue("problem", LenientSpec.describe("status", e))
                    .log("status not readable; read as none, the next reconcile writes a new one");
            return null;
        }
    }
}

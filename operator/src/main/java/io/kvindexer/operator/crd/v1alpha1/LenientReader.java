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

/**
 * Reads a part of a custom resource as its declared type, and hands what cannot be read that way to {@link
 * #unreadable} instead of failing the read of the whole resource ({@link LenientSpec}, {@link LenientStatus}).
 */
abstract class LenientReader<T> extends JsonDeserializer<T> implements ContextualDeserializer {
    final JavaType type;

    LenientReader(JavaType type) {
        this.type = type;
    }

    /** This reader for the declared {@code type} of the property it reads. */
    abstract LenientReader<T> forType(JavaType type);

    /** What a part written as {@code written}, which {@code e} kept from being read, reads as. */
    abstract T unreadable(JsonNode written, Exception e) throws IOException;

    @Override
    public JsonDeserializer<?> createContextual(DeserializationContext ctxt, BeanProperty property) {
        return forType(property != null ? property.getType() : ctxt.getContextualType());
    }

    @Override
    public T deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
        JsonNode written = ctxt.readTree(p);
        try {
            return ctxt.readTreeAsValue(written, type);
        } catch (DatabindException | IllegalArgumentException | ArithmeticException e) {
            return unreadable(written, e);
        }
    }
}

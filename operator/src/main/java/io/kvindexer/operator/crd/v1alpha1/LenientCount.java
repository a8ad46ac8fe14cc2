package io.kvindexer.operator.crd.v1alpha1;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import java.io.IOException;

/**
 * Reads an integer count, and anything else (an array or object an older or newer operator stored under the same
 * name) as null instead of failing: one odd status field must not stop the informer.
 */
public final class LenientCount extends JsonDeserializer<Integer> {
    @Override
    public Integer deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
        if (p.currentToken() == JsonToken.VALUE_NUMBER_INT) {
            return p.getIntValue();
        }
        p.skipChildren();
        return null;
    }
}

package io.kvindexer.indexer.json;

import com.fasterxml.jackson.core.JsonToken;

/** How an error message names the JSON value it found, the same words for the HTTP bodies and the dump codec. */
public final class JsonTokens {

    private JsonTokens() {}

    /** "a string", "an integer", … or "end of input" for no token. */
    public static String describe(JsonToken t) {
        if (t == null) {
            return "end of input";
        }
        return switch (t) {
            case VALUE_NULL -> "null";
            case VALUE_STRING -> "a string";
            case VALUE_NUMBER_INT -> "an integer";
            case VALUE_NUMBER_FLOAT -> "a decimal number";
            case VALUE_TRUE, VALUE_FALSE -> "a boolean";
            case START_ARRAY -> "an array";
            case START_OBJECT -> "an object";
            default -> t.asString() == null ? t.name() : t.asString();
        };
    }
}

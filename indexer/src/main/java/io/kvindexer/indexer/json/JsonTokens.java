package io.kvindexer.indexer.json;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import java.util.regex.Pattern;

/** How an error message names the JSON value it found, the same words for the HTTP bodies and the dump codec. */
public final class JsonTokens {

    /** Jackson's "[Source: REDACTED (`StreamReadFeature...` disabled); line: 1, column: 1]": its input's internals */
    private static final Pattern SOURCE = Pattern.compile("\\[Source: .*?; line: (\\d+), column: (\\d+)]");

    /**
     * What Jackson adds about its own settings, which a client cannot change: ": enable `JsonReadFeature.X` to allow",
     * " (not recognized as one since Feature 'X' not enabled for parser)", ", from `StreamReadConstraints.x()`".
     */
    private static final Pattern SETTINGS = Pattern.compile(": enable `JsonReadFeature\\.\\w+` to allow"
            + "| \\(not recognized as one since Feature '\\w+' not enabled for parser\\)"
            + "|, from `StreamReadConstraints\\.\\w+\\(\\)`");

    private JsonTokens() {}

    /**
     * Jackson's reason for malformed JSON without the internals it mixes in: {@code Unexpected end-of-input: expected
     * close marker for Object (start marker at line 1, column 1)}, where Jackson names its source and a feature flag;
     * {@code Non-standard token 'NaN'}, without how to make Jackson take it.
     */
    public static String problem(JsonProcessingException e) {
        String message = SOURCE.matcher(String.valueOf(e.getOriginalMessage())).replaceAll("line $1, column $2");
        return SETTINGS.matcher(message).replaceAll("");
    }

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

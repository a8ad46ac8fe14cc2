package io.kvindexer.indexer.common;

/**
 * A value a client sent, as an error or a log line quotes it. An error names what was wrong, it does not mirror it:
 * a query for a model name of 3 MB was answered a 404 of 3 MB, an endpoint of 200 KB a 400 of 200 KB.
 */
public final class Quoted {

    /** The most characters of a client's value that an error quotes. */
    public static final int MAX = 100;

    private Quoted() {}

    /**
     * {@code value}'s first {@value #MAX} characters, then {@code ...} when there was more. A cut between the two
     * halves of a surrogate pair keeps neither: half a character is not valid UTF-8 and would reach the JSON body or
     * the log as {@code ?}.
     */
    public static String of(String value) {
        if (value.length() <= MAX) {
            return value;
        }
        int end = Character.isHighSurrogate(value.charAt(MAX - 1)) ? MAX - 1 : MAX;
        return value.substring(0, end) + "...";
    }
}

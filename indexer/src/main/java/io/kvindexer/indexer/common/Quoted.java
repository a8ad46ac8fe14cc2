package io.kvindexer.indexer.common;

/**
 * A value a client sent, as an error or a log line quotes it. An error names what was wrong, it does not mirror it:
 * a query for a model name of 3 MB was answered a 404 of 3 MB, an endpoint of 200 KB a 400 of 200 KB.
 */
public final class Quoted {

    /** The most characters of a client's value that an error quotes. */
    public static final int MAX = 100;

    private Quoted() {}

    /** {@code value}'s first {@value #MAX} characters, then {@code ...} when there was more. */
    public static String of(String value) {
        return value.length() <= MAX ? value : value.substring(0, MAX) + "...";
    }
}

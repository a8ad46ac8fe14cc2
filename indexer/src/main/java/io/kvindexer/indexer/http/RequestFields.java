package io.kvindexer.indexer.http;

import java.nio.IntBuffer;

/**
 * The typed field readers {@link Requests} decodes a body with, whatever its encoding: {@link JsonBody} for JSON,
 * {@link MsgpackBody} for msgpack. Each failure is an {@link ApiError} with the same status and message in both,
 * naming the field. Package-private abstract methods (not an interface) so the readers stay package-private.
 */
abstract class RequestFields implements AutoCloseable {

    /** The next field name of the top-level object, positioned on its value; null at the end of the object. */
    abstract String nextField();

    abstract void skipValue();

    abstract String string(String field);

    /** A string or null. */
    abstract String optionalString(String field);

    abstract long u64(String field);

    abstract int u32(String field);

    /** A u32 or null (null → the default). */
    abstract Integer optionalU32(String field);

    /**
     * Token ids: u32 values as raw 32-bit patterns, over the array they were decoded into or, from a msgpack bin,
     * over the body's own bytes (no copy).
     */
    abstract IntBuffer u32Array(String field);

    /** 64-bit hashes: i64, or the unsigned form up to 2^64 - 1. */
    abstract long[] hashArray(String field);

    /** Releases the reader (a streaming parser, a read deadline); nothing by default. */
    @Override
    public void close() {}
}

package io.kvindexer.indexer.http;

import io.kvindexer.indexer.common.Quoted;

/** A request we refuse, with its status and the message of the {@code {"error": ...}} body. Mapped once in routing. */
public final class ApiError extends RuntimeException {

    private final int status;

    public ApiError(int status, String message) {
        super(message, null, false, false);
        this.status = status;
    }

    public int status() {
        return status;
    }

    /** {@code value} as an error quotes it ({@link Quoted}): its first 100 characters, then {@code ...}. */
    static String quoted(String value) {
        return Quoted.of(value);
    }

    /** A query's (model, tenant) that has no index: 404, as Dynamo answers it. */
    static ApiError noIndexer(String model, String tenant) {
        return new ApiError(404, "no indexer for model=" + quoted(model) + " tenant=" + quoted(tenant));
    }

    static ApiError badJson(String message) {
        return new ApiError(400, message);
    }

    /** Missing field, wrong type, null, out of range: 422 like Dynamo (axum's Json extractor). */
    static ApiError invalid(String message) {
        return new ApiError(422, message);
    }

    static ApiError tooLarge(long limit) {
        return new ApiError(413, "request body is larger than the limit of " + limit + " bytes");
    }
}

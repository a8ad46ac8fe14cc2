package io.kvindexer.indexer.http;

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

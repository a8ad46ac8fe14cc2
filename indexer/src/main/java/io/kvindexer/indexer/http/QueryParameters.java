package io.kvindexer.indexer.http;

import io.helidon.common.parameters.Parameters;
import java.util.List;
import java.util.Optional;

/** The query string's parameters as the routes read them, each given at most once. */
final class QueryParameters {

    private QueryParameters() {}

    /**
     * The value of {@code name}, empty when it is absent. One without {@code =} ({@code ?model_name}) is the empty
     * string, as {@code model_name=} is (and as axum, Dynamo's server, reads it), not absent; one given twice is a
     * {@code 400}, as Dynamo refuses a duplicate field (taking either would answer another question than was asked).
     */
    static Optional<String> single(Parameters query, String name) {
        if (!query.contains(name)) {
            return Optional.empty();
        }
        List<String> values = query.all(name);
        if (values.size() > 1) {
            throw new ApiError(400, "duplicate query parameter `" + name + "`");
        }
        return Optional.of(values.isEmpty() ? "" : values.getFirst());
    }

    /**
     * The flag {@code name}: {@code true} or {@code false} in any case, {@code absent} when not given; anything else is
     * a {@code 400}, not read as either.
     */
    static boolean flag(Parameters query, String name, boolean absent) {
        Optional<String> given = single(query, name);
        if (given.isEmpty()) {
            return absent;
        }
        if (given.get().equalsIgnoreCase("true")) {
            return true;
        }
        if (given.get().equalsIgnoreCase("false")) {
            return false;
        }
        throw new ApiError(400, "query parameter `" + name + "` must be true or false, got `" + given.get() + "`");
    }
}

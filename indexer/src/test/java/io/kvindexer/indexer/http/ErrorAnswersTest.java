package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.testing.junit5.DirectClient;
import io.helidon.webserver.testing.junit5.RoutingTest;
import io.helidon.webserver.testing.junit5.SetUpRoute;
import io.kvindexer.indexer.registry.RegistryException;
import org.junit.jupiter.api.Test;

/**
 * The error mapping of {@link IndexerRouting} on routes that fail on purpose, through Helidon's harness directly: a
 * domain error keeps its status and message; anything unexpected is a 500 whose body says nothing of the exception.
 */
@RoutingTest
class ErrorAnswersTest {

    @SetUpRoute
    static void routing(HttpRouting.Builder routing) {
        routing.get("/unexpected", (req, res) -> {
            throw new IllegalStateException("secret detail at /var/lib/kv/thing");
        });
        routing.get("/invalid", (req, res) -> {
            throw ApiError.invalid("invalid value for `x`");
        });
        routing.get("/conflict", (req, res) -> {
            throw new RegistryException(RegistryException.Kind.CONFLICT, "instance 1 dp_rank 0 already registered");
        });
        IndexerRouting.errors(routing);
    }

    private static HttpTestClient.Response get(DirectClient client, String path) {
        return new HttpTestClient(client).get(path);
    }

    @Test
    void unexpectedFailureIsAGeneric500(DirectClient client) {
        HttpTestClient.Response r = get(client, "/unexpected");
        r.assertStatus(500);
        assertThat(r.contentType()).startsWith("application/json");
        assertThat(r.body()).isEqualTo("{\"error\":\"internal error\"}");
    }

    @Test
    void domainErrorsKeepTheirStatusAndText(DirectClient client) {
        HttpTestClient.Response invalid = get(client, "/invalid");
        invalid.assertStatus(422);
        assertThat(invalid.error()).isEqualTo("invalid value for `x`");
        HttpTestClient.Response conflict = get(client, "/conflict");
        conflict.assertStatus(409);
        assertThat(conflict.error()).isEqualTo("instance 1 dp_rank 0 already registered");
    }
}

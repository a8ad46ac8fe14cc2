package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.helidon.webserver.testing.junit5.ServerTest;
import org.junit.jupiter.api.Test;

/**
 * Query strings as a client may write them, over a socket (the in-memory client rebuilds the query it sends): a
 * parameter given twice is refused (as Dynamo refuses a duplicate field), not read as its first value; one without
 * {@code =} is the empty string, as {@code name=} is, not absent.
 */
@ServerTest
class QueryParametersTest extends OneWorkerRoutes {

    private static void assertError(HttpTestClient.Response r, String... fragments) {
        assertThat(r.status()).as(r.body()).isEqualTo(400);
        assertThat(r.contentType()).startsWith("application/json");
        assertThat(r.error()).as(r.body()).isNotNull().contains(fragments);
    }

    @Test
    void aParameterGivenTwiceIs400() {
        assertError(http.get("/workers?model_name=m&model_name=x"), "duplicate query parameter `model_name`");
        assertError(http.get("/workers?tenant_id=default&tenant_id=x"), "duplicate query parameter `tenant_id`");
        assertError(http.get("/dump?registrations=false&registrations=true"), "`registrations`");
        assertError(http.get("/stats?workers=false&workers=false"), "`workers`");
        assertError(http.get("/prefixes?model_name=m&limit=1&limit=2"), "`limit`");
        assertThat(http.get("/workers?model_name=m&tenant_id=default").json()).hasSize(1);
    }

    @Test
    void aParameterWithoutAValueIsEmpty() {
        assertThat(http.get("/workers?model_name").body()).isEqualTo("[]");
        assertThat(http.get("/workers?model_name=").body()).isEqualTo("[]");
        assertThat(http.get("/workers?model_name=m").json()).hasSize(1);
        assertError(http.get("/dump?registrations"), "`registrations` must be true or false, got ``");
        assertError(http.get("/stats?workers"), "`workers` must be true or false, got ``");
        assertError(http.get("/prefixes?model_name=m&limit"), "`limit`");
    }
}

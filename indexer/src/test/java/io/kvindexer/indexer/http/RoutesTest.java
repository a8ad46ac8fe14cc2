package io.kvindexer.indexer.http;

import io.helidon.webserver.testing.junit5.RoutingTest;
import io.helidon.webserver.testing.junit5.ServerTest;
import io.kvindexer.indexer.metrics.MetricsEndpointTest;
import io.kvindexer.indexer.security.BearerAuthAndLimitsTest;
import org.junit.jupiter.api.Nested;

/**
 * Runs every route test body (the abstract classes marked {@link IndexerRoutes}) both ways, each with its own
 * indexer: {@link InMemory} through Helidon's {@code @RoutingTest} DirectClient (no socket), {@link OverSocket} on
 * Helidon's {@code @ServerTest} server. Helidon wants its annotation on the test class itself, hence one nested class
 * per body and way; a new body is added to both lists here.
 */
class RoutesTest {

    @Nested
    class InMemory {

        @Nested
        @RoutingTest
        class Peers extends PeerRoutesTest {}

        @Nested
        @RoutingTest
        class ListenerControl extends ListenerControlTest {}

        @Nested
        @RoutingTest
        class FailedListener extends FailedListenerTest {}

        @Nested
        @RoutingTest
        class RequestValidation extends RequestValidationTest {}

        @Nested
        @RoutingTest
        class Ready extends ReadinessTest.Ready {}

        @Nested
        @RoutingTest
        class MinInitialWorkersGate extends ReadinessTest.Gate {}

        @Nested
        @RoutingTest
        class Metrics extends MetricsEndpointTest.Cases {}

        @Nested
        @RoutingTest
        class BearerToken extends BearerAuthAndLimitsTest.TokenCases {}
    }

    @Nested
    class OverSocket {

        @Nested
        @ServerTest
        class Peers extends PeerRoutesTest {}

        @Nested
        @ServerTest
        class ListenerControl extends ListenerControlTest {}

        @Nested
        @ServerTest
        class FailedListener extends FailedListenerTest {}

        @Nested
        @ServerTest
        class RequestValidation extends RequestValidationTest {}

        @Nested
        @ServerTest
        class Ready extends ReadinessTest.Ready {}

        @Nested
        @ServerTest
        class MinInitialWorkersGate extends ReadinessTest.Gate {}

        @Nested
        @ServerTest
        class Metrics extends MetricsEndpointTest.Cases {}

        @Nested
        @ServerTest
        class BearerToken extends BearerAuthAndLimitsTest.TokenCases {}
    }
}

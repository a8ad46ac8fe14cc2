package io.kvindexer.indexer.http;

import io.helidon.webserver.testing.junit5.RoutingTest;
import io.kvindexer.indexer.metrics.MetricsEndpointTest;
import io.kvindexer.indexer.security.BearerAuthAndLimitsTest;
import org.junit.jupiter.api.Nested;

/**
 * The route test bodies (the abstract classes marked {@link IndexerRoutes}) run in memory, through Helidon's
 * {@code @RoutingTest} DirectClient (no socket): one nested class per body, each with its own indexer.
 * {@link RoutesOverSocketTest} runs the same bodies the other way.
 */
class RoutesInMemoryTest {

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

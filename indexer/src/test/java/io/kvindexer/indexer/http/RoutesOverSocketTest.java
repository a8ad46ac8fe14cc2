package io.kvindexer.indexer.http;

import io.helidon.webserver.testing.junit5.ServerTest;
import io.kvindexer.indexer.metrics.MetricsEndpointTest;
import io.kvindexer.indexer.security.BearerAuthAndLimitsTest;
import org.junit.jupiter.api.Nested;

/**
 * The route test bodies (the abstract classes marked {@link IndexerRoutes}) run over a real socket, on Helidon's
 * {@code @ServerTest} server: one nested class per body, each with its own indexer. {@link RoutesInMemoryTest}
 * runs the same bodies the other way.
 */
class RoutesOverSocketTest {

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

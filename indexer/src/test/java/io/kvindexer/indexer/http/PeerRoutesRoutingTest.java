package io.kvindexer.indexer.http;

import io.helidon.webserver.testing.junit5.RoutingTest;

@RoutingTest
@IndexerRoutes
class PeerRoutesRoutingTest extends PeerRoutesTest {
}

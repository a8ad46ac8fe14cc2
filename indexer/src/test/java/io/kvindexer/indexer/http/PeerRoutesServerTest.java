package io.kvindexer.indexer.http;

import io.helidon.webserver.testing.junit5.ServerTest;

@ServerTest
@IndexerRoutes
class PeerRoutesServerTest extends PeerRoutesTest {
}

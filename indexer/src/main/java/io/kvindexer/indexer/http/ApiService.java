package io.kvindexer.indexer.http;

/**
 * A part of the API: declares its endpoints in the {@link Routes} table (instead of Helidon's HttpService rules).
 * Most services are records of what their handlers work on.
 */
interface ApiService {

    void routes(Routes routes);
}

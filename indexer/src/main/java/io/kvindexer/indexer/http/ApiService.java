package io.kvindexer.indexer.http;

/** A part of the API: declares its endpoints in the {@link Routes} table (instead of Helidon's HttpService rules). */
interface ApiService {

    void routes(Routes routes);
}

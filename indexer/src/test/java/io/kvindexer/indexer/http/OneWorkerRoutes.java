package io.kvindexer.indexer.http;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * Route cases over an indexer that holds one worker (instance 1, model {@code m}, block size 4), so that requests
 * about it reach the route's own checks; {@link #http} is the client of the running case.
 */
@IndexerRoutes
abstract class OneWorkerRoutes {

    HttpTestClient http;

    @BeforeAll
    static void registerAWorker(HttpTestClient http) {
        http.post("/register", """
                {"instance_id":1,"endpoint":"tcp://127.0.0.1:1","model_name":"m","block_size":4}""").assertStatus(201);
    }

    @BeforeEach
    void client(HttpTestClient http) {
        this.http = http;
    }
}

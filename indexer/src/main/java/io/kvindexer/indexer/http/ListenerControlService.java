package io.kvindexer.indexer.http;

import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.kvindexer.indexer.registry.RegistryException;
import io.kvindexer.indexer.registry.WorkerRegistry;

/**
 * {@code /test/pause_listener} and {@code /test/resume_listener} (compatibility.md, HTTP API): mounted only when
 * {@code DYN_KV_INDEXER_TEST_ENDPOINTS} is on; they let end-to-end tests create gaps on purpose.
 */
record ListenerControlService(WorkerRegistry registry, long maxBody) implements ApiService {

    @Override
    public void routes(Routes routes) {
        routes.post("/test/pause_listener", Routes.Access.TOKEN, this::pause)
                .post("/test/resume_listener", Routes.Access.TOKEN, this::resume);
    }

    private void pause(ServerRequest req, ServerResponse res) throws RegistryException {
        control(req, res, registry::pause);
    }

    private void resume(ServerRequest req, ServerResponse res) throws RegistryException {
        control(req, res, registry::resume);
    }

    /** What a control call does to the listener of one (instance, dp rank). */
    @FunctionalInterface
    private interface Action {
        void apply(long instanceId, int dpRank) throws RegistryException;
    }

    private void control(ServerRequest req, ServerResponse res, Action action) throws RegistryException {
        Requests.ListenerControl c = JsonBody.read(req, maxBody, Requests::listenerControl);
        action.apply(c.instanceId(), c.dpRank());
        JsonOut.ok(res, 200);
    }
}

package io.kvindexer.indexer.http;

import io.kvindexer.indexer.recovery.StartupGate;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

/** Liveness ({@code /health}, always 200) and readiness ({@code /ready}, spec §6.4 reasons). */
final class HealthService implements ApiService {

    private final StartupGate gate;

    HealthService(StartupGate gate) {
        this.gate = gate;
    }

    @Override
    public void routes(Routes routes) {
        routes.get("/health", Routes.Access.OPEN, this::health)
                .get("/ready", Routes.Access.OPEN, this::ready);
    }

    private void health(ServerRequest req, ServerResponse res) {
        res.send();
    }

    private void ready(ServerRequest req, ServerResponse res) {
        String reason = gate.reason();
        boolean ready = StartupGate.READY.equals(reason);
        JsonOut.send(res, ready ? 200 : 503, g -> {
            g.writeStartObject();
            g.writeBooleanField("ready", ready);
            g.writeStringField("reason", reason);
            g.writeEndObject();
        });
    }
}

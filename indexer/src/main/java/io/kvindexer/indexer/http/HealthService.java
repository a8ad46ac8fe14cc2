package io.kvindexer.indexer.http;

import com.fasterxml.jackson.core.JsonGenerator;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.kvindexer.indexer.ingest.ListenerSnapshot;
import io.kvindexer.indexer.ingest.ListenerStatus;
import io.kvindexer.indexer.recovery.StartupGate;
import io.kvindexer.indexer.registry.WorkerRegistry;
import io.kvindexer.indexer.registry.WorkerView;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Liveness ({@code /health}, always 200) and readiness ({@code /ready}): 200 once the startup gate is open, else 503
 * with what it waits for. Listeners that are failed, still connecting, or running but cut off from their engine are
 * listed in the body ({@code listeners_failed}, {@code listeners_pending}, {@code listeners_disconnected}) but never
 * change the status: a readiness probe that failed on one unreachable engine would take every replica out of its
 * Service at once.
 */
record HealthService(StartupGate gate, WorkerRegistry workers) implements ApiService {

    /** Listed per kind in the body; the rest is counted in {@code listeners_omitted} (the body stays small). */
    static final int MAX_LISTED = 32;

    @Override
    public void routes(Routes routes) {
        routes.get("/health", Routes.Access.OPEN, this::health).get("/ready", Routes.Access.OPEN, this::ready);
    }

    private void health(ServerRequest req, ServerResponse res) {
        res.send();
    }

    private record Troubled(long instanceId, int dpRank, ListenerSnapshot listener) {}

    private void ready(ServerRequest req, ServerResponse res) {
        String reason = gate.reason();
        boolean ready = StartupGate.READY.equals(reason);
        List<Troubled> failed = new ArrayList<>();
        List<Troubled> pending = new ArrayList<>();
        List<Troubled> disconnected = new ArrayList<>();
        List<Troubled> notConnected = new ArrayList<>();
        for (WorkerView w : workers.list(null, null)) {
            for (Map.Entry<Integer, ListenerSnapshot> e : w.listeners().entrySet()) {
                ListenerStatus s = e.getValue().status();
                Troubled t = new Troubled(w.instanceId(), e.getKey(), e.getValue());
                if (s == ListenerStatus.FAILED) {
                    failed.add(t);
                } else if (e.getValue().connection() == ListenerSnapshot.Connection.DISCONNECTED) {
                    disconnected.add(t);
                } else if (s != ListenerStatus.PAUSED
                        && e.getValue().connection() == ListenerSnapshot.Connection.NOT_CONNECTED) {
                    // never connected yet (pending until it does): its engine is not up, or nothing (or no PUB)
                    // listens at its address
                    notConnected.add(t);
                } else if (s == ListenerStatus.PENDING) {
                    pending.add(t); // connected, waiting for the startup gate
                }
            }
        }
        JsonOut.send(res, ready ? 200 : 503, g -> {
            g.writeStartObject();
            g.writeBooleanField("ready", ready);
            g.writeStringField("reason", reason);
            int omitted = list(g, "listeners_failed", failed)
                    + list(g, "listeners_pending", pending)
                    + list(g, "listeners_disconnected", disconnected)
                    + list(g, "listeners_not_connected", notConnected);
            if (omitted > 0) {
                g.writeNumberField("listeners_omitted", omitted);
            }
            g.writeEndObject();
        });
    }

    /** Writes up to {@link #MAX_LISTED} entries (nothing when empty); returns how many were left out. */
    private static int list(JsonGenerator g, String field, List<Troubled> listeners) throws IOException {
        if (listeners.isEmpty()) {
            return 0;
        }
        g.writeArrayFieldStart(field);
        for (Troubled t : listeners.subList(0, Math.min(MAX_LISTED, listeners.size()))) {
            g.writeStartObject();
            JsonOut.u64Field(g, "instance_id", t.instanceId());
            g.writeFieldName("dp_rank");
            g.writeNumber(Integer.toUnsignedString(t.dpRank()));
            g.writeStringField("endpoint", t.listener().endpoint());
            if (t.listener().disconnectedSince() != null) {
                g.writeNumberField(
                        "disconnected_since_ms",
                        t.listener().disconnectedSince().toEpochMilli());
            }
            if (t.listener().lastError() != null) {
                g.writeStringField("last_error", t.listener().lastError());
            }
            if (t.listener().connectError() != null) {
                g.writeStringField("connect_error", t.listener().connectError());
            }
            g.writeEndObject();
        }
        g.writeEndArray();
        return Math.max(0, listeners.size() - MAX_LISTED);
    }
}

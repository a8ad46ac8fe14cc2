package io.kvindexer.indexer.http;

import com.fasterxml.jackson.core.JsonGenerator;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.kvindexer.indexer.ingest.Exactness;
import io.kvindexer.indexer.ingest.ListenerSnapshot;
import io.kvindexer.indexer.ingest.SequenceWatermark;
import io.kvindexer.indexer.ingest.StreamProgress;
import io.kvindexer.indexer.registry.RegistryException;
import io.kvindexer.indexer.registry.WorkerRegistry;
import io.kvindexer.indexer.registry.WorkerView;
import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * Worker registrations: {@code /register}, {@code /unregister}, {@code /workers} (compatibility.md, HTTP API).
 *
 * @param accessLog told the model of each registration; null without {@code --access-log}
 */
record WorkerService(WorkerRegistry registry, long maxBody, AccessLog accessLog) implements ApiService {

    @Override
    public void routes(Routes routes) {
        routes.post("/register", Routes.Access.TOKEN, this::register)
                .post("/unregister", Routes.Access.TOKEN, this::unregister)
                .get("/workers", Routes.Access.OPEN, this::workers);
    }

    private void register(ServerRequest req, ServerResponse res) throws RegistryException {
        var registration = JsonBody.read(req, maxBody, Requests::register);
        AccessLog.model(accessLog, req, registration.modelName());
        registry.register(registration);
        JsonOut.ok(res, 201);
    }

    private void unregister(ServerRequest req, ServerResponse res) throws RegistryException {
        Requests.Unregister u = JsonBody.read(req, maxBody, Requests::unregister);
        AccessLog.model(accessLog, req, u.modelName());
        registry.unregister(u.instanceId(), u.modelName(), u.tenantId(), u.dpRank());
        JsonOut.ok(res, 200);
    }

    private void workers(ServerRequest req, ServerResponse res) {
        var query = req.query();
        String model = QueryParameters.single(query, "model_name").orElse(null);
        String tenant = QueryParameters.single(query, "routing_group") // the one that counts when both are given
                .orElseGet(() -> QueryParameters.single(query, "tenant_id").orElse(null));
        List<WorkerView> views = registry.list(model, tenant);
        JsonOut.send(res, 200, g -> {
            g.writeStartArray();
            for (WorkerView w : views) {
                write(g, w);
            }
            g.writeEndArray();
        });
    }

    /** Ours, additive: the last seq applied and when this process last applied a batch; absent before the first. */
    private static void progress(JsonGenerator g, StreamProgress p) throws IOException {
        if (p.lastSeq() != SequenceWatermark.UNSET) {
            JsonOut.u64Field(g, "last_seq", p.lastSeq());
        }
        if (p.lastBatchAt() != null) {
            g.writeNumberField("last_batch_ms", p.lastBatchAt().toEpochMilli());
        }
    }

    /** Ours, additive: how complete the index is for this stream, why not, and since when (docs/concepts.md). */
    private static void exactness(JsonGenerator g, Exactness.Reading x) throws IOException {
        if (x == null) {
            return;
        }
        g.writeStringField("exactness", x.state().label());
        if (x.reason() != null) {
            g.writeStringField("exactness_reason", x.reason());
        }
        g.writeNumberField("exactness_since_ms", x.since().toEpochMilli());
    }

    static void write(JsonGenerator g, WorkerView w) throws IOException {
        g.writeStartObject();
        JsonOut.u64Field(g, "instance_id", w.instanceId());
        g.writeStringField("source", "zmq");
        g.writeStringField("status", w.status().label());
        g.writeStringField("model_name", w.modelName());
        g.writeStringField("tenant_id", w.tenantId());
        g.writeStringField("routing_group", w.tenantId()); // newer Dynamo's name for it, which its clients read
        g.writeFieldName("block_size");
        g.writeNumber(Integer.toUnsignedString(w.blockSize()));
        if (w.podName() != null) { // absent when unknown, as Dynamo's clients expect nothing there
            g.writeStringField("pod_name", w.podName());
        }
        g.writeObjectFieldStart("endpoints");
        for (Map.Entry<Integer, ListenerSnapshot> e : w.listeners().entrySet()) {
            g.writeStringField(
                    Integer.toUnsignedString(e.getKey()), e.getValue().endpoint());
        }
        g.writeEndObject();
        g.writeObjectFieldStart("listeners");
        for (Map.Entry<Integer, ListenerSnapshot> e : w.listeners().entrySet()) {
            g.writeObjectFieldStart(Integer.toUnsignedString(e.getKey()));
            g.writeStringField("endpoint", e.getValue().endpoint());
            g.writeStringField("status", e.getValue().status().label());
            if (e.getValue().lastError() != null) {
                g.writeStringField("last_error", e.getValue().lastError());
            }
            // ours, additive: Dynamo's status says nothing of a SUB socket that is reconnecting on its own
            g.writeBooleanField("connected", e.getValue().connected());
            if (e.getValue().disconnectedSince() != null) {
                g.writeNumberField(
                        "disconnected_since_ms",
                        e.getValue().disconnectedSince().toEpochMilli());
            }
            if (e.getValue().connectError() != null) {
                g.writeStringField("connect_error", e.getValue().connectError());
            }
            progress(g, w.progress().getOrDefault(e.getKey(), StreamProgress.NONE));
            exactness(g, e.getValue().exactness());
            g.writeEndObject();
        }
        g.writeEndObject();
        g.writeEndObject();
    }
}

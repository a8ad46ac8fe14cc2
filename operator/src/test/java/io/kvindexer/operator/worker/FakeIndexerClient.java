package io.kvindexer.operator.worker;

import io.kvindexer.operator.client.IndexerClient;
import io.kvindexer.operator.client.IndexerClientException;
import io.kvindexer.operator.client.IndexerEndpoint;
import io.kvindexer.operator.client.RegisteredWorker;
import io.kvindexer.operator.client.WorkerKey;
import io.kvindexer.operator.client.WorkerRegistration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * An in-memory replica behind the typed client (one per test): registrations keyed like the indexer keys them, the
 * calls it received in order, and ranks or reads made to fail with a given HTTP status.
 */
final class FakeIndexerClient extends IndexerClient {
    record Registered(String model, String tenant, int blockSize, String endpoint) {}

    final Map<WorkerKey, Registered> registrations = new LinkedHashMap<>();
    final List<String> calls = new ArrayList<>();
    final Map<WorkerKey, Integer> failRegister = new LinkedHashMap<>();
    final Map<WorkerKey, Integer> failUnregister = new LinkedHashMap<>();
    /** What GET /workers says of a rank's exactness (absent: not said). */
    final Map<WorkerKey, io.kvindexer.operator.client.ListenerExactness> exactness = new LinkedHashMap<>();

    int failReads;

    @Override
    public List<RegisteredWorker> workers(IndexerEndpoint replica) {
        calls.add("workers");
        if (failReads != 0) {
            throw new IndexerClientException(replica.name() + " unreachable: ConnectException", failReads, null);
        }
        Map<Long, Map<Integer, String>> byInstance = new TreeMap<>();
        Map<Long, Registered> keyOf = new TreeMap<>();
        registrations.forEach((k, r) -> {
            byInstance.computeIfAbsent(k.instanceId(), i -> new TreeMap<>()).put(k.dpRank(), r.endpoint());
            keyOf.put(k.instanceId(), r);
        });
        List<RegisteredWorker> out = new ArrayList<>();
        byInstance.forEach((id, endpoints) -> {
            Map<Integer, io.kvindexer.operator.client.ListenerExactness> x = new TreeMap<>();
            exactness.forEach((k, v) -> {
                if (k.instanceId() == id && endpoints.containsKey(k.dpRank())) {
                    x.put(k.dpRank(), v);
                }
            });
            out.add(new RegisteredWorker(
                    id,
                    keyOf.get(id).model(),
                    keyOf.get(id).tenant(),
                    keyOf.get(id).blockSize(),
                    "active",
                    endpoints,
                    x));
        });
        return out;
    }

    @Override
    public void register(
            IndexerEndpoint replica, WorkerRegistration r, String modelName, String tenantId, int blockSize) {
        calls.add("register " + r.instanceId() + "/" + r.dpRank());
        Integer status = failRegister.get(r.key());
        if (status != null && status < 0) {
            throw new IndexerClientException(replica.name() + " unreachable: HttpTimeoutException", status, null);
        }
        if (status != null) {
            throw new IndexerClientException("POST /register answered " + status, status, null);
        }
        registrations.put(r.key(), new Registered(modelName, tenantId, blockSize, r.endpoint()));
    }

    @Override
    public void unregister(IndexerEndpoint replica, long instanceId, int dpRank, String modelName, String tenantId) {
        WorkerKey key = new WorkerKey(instanceId, dpRank);
        calls.add("unregister " + instanceId + "/" + dpRank);
        Integer status = failUnregister.get(key);
        if (status == null && !registrations.containsKey(key)) {
            status = 404;
        }
        if (status != null) {
            throw new IndexerClientException("POST /unregister answered " + status, status, null);
        }
        registrations.remove(key);
    }

    Set<WorkerKey> keys() {
        return new HashSet<>(registrations.keySet());
    }
}

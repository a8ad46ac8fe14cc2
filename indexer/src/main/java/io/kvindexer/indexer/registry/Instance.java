package io.kvindexer.indexer.registry;

import java.util.Map;
import java.util.TreeMap;

/** One registered instance: its (model, tenant), its ranks, its pod. Guarded by the registry's lock. */
final class Instance {
    final long id;
    final String model;
    final String tenant;
    final Map<Integer, Rank> ranks = new TreeMap<>(Integer::compareUnsigned);
    String podName;

    Instance(long id, String model, String tenant) {
        this.id = id;
        this.model = model;
        this.tenant = tenant;
    }

    boolean sameKey(String m, String t) {
        return model.equals(m) && tenant.equals(t);
    }
}

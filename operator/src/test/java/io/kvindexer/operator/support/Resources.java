package io.kvindexer.operator.support;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.KvIndexerSpec;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerSpec;
import java.util.List;
import java.util.Map;

/** Test objects with the fields a user would write. */
public final class Resources {
    /** The labels of the engine pods the end-to-end tests start, which their KvWorkers select. */
    public static final Map<String, String> VLLM = Map.of("app", "vllm");

    private Resources() {}

    public static KvIndexer kvIndexer(String ns, String name, int replicas, int port) {
        KvIndexer kvi = new KvIndexer();
        kvi.setMetadata(new ObjectMetaBuilder().withNamespace(ns).withName(name).build());
        KvIndexerSpec spec = new KvIndexerSpec();
        spec.setReplicas(replicas);
        spec.setImage("ghcr.io/example/kv-indexer:0.1.0");
        spec.setPort(port);
        kvi.setSpec(spec);
        return kvi;
    }

    /** The condition of {@code type} (it must be there). */
    public static Condition condition(List<Condition> conditions, String type) {
        return conditions.stream()
                .filter(c -> type.equals(c.getType()))
                .findFirst()
                .orElseThrow();
    }

    public static KvWorker kvWorker(
            String ns,
            String name,
            String indexer,
            Map<String, String> selector,
            String model,
            int blockSize,
            int zmqPort,
            Integer replayPort,
            int ranks) {
        KvWorker w = new KvWorker();
        w.setMetadata(new ObjectMetaBuilder().withNamespace(ns).withName(name).build());
        KvWorkerSpec spec = new KvWorkerSpec();
        spec.setIndexerRef(indexer);
        spec.setSelector(new LabelSelectorBuilder().withMatchLabels(selector).build());
        spec.setModelName(model);
        spec.setBlockSize(blockSize);
        spec.setZmqPort(zmqPort);
        spec.setReplayPort(replayPort);
        spec.setDataParallelSize(ranks);
        w.setSpec(spec);
        return w;
    }
}

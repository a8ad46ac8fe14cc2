package io.kvindexer.operator.worker;

import com.dynatrace.hash4j.hashing.Hashing;
import io.fabric8.kubernetes.api.model.Pod;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The instance id of an engine pod: the value of {@code instanceIdAnnotation} when the KvWorker names one (an
 * unsigned 64-bit decimal), otherwise XXH3-64 (seed 0, hash4j) of the UTF-8 bytes of {@code "<namespace>/<name>"}
 * with the top bit cleared: positive, 63-bit, and unchanged when the pod's IP changes.
 */
public final class InstanceIds {
    private InstanceIds() {}

    public static long of(Pod pod, String annotation) {
        if (annotation != null && !annotation.isBlank()) {
            Map<String, String> annotations = pod.getMetadata().getAnnotations();
            String value = annotations == null ? null : annotations.get(annotation);
            if (value == null) {
                throw new IllegalArgumentException("pod " + pod.getMetadata().getName() + " has no annotation "
                        + annotation + " (spec.instanceIdAnnotation)");
            }
            try {
                return Long.parseUnsignedLong(value.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("pod " + pod.getMetadata().getName() + ": annotation " + annotation
                        + "=\"" + value + "\" is not an unsigned 64-bit integer");
            }
        }
        return hashOf(pod.getMetadata().getNamespace(), pod.getMetadata().getName());
    }

    public static long hashOf(String namespace, String name) {
        long h = Hashing.xxh3_64().hashBytesToLong((namespace + "/" + name).getBytes(StandardCharsets.UTF_8))
                & Long.MAX_VALUE;
        return h == 0 ? 1 : h;
    }
}

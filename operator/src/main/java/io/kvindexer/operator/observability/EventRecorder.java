package io.kvindexer.operator.observability;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes Kubernetes Events (core/v1) on our resources. The same reason + message on the same object is written once
 * until it changes, so a level-triggered loop does not flood the namespace. Never throws: an event is a courtesy.
 */
public class EventRecorder {
    public static final String COMPONENT = "kv-indexer-operator";
    public static final String UNKNOWN_FIELDS = "UnknownFields";
    private static final Logger LOG = LoggerFactory.getLogger(EventRecorder.class);

    private final KubernetesClient client;
    private final Clock clock;
    private final Map<String, String> lastByObjectAndReason = new ConcurrentHashMap<>();

    public EventRecorder(KubernetesClient client, Clock clock) {
        this.client = client;
        this.clock = clock;
    }

    public void normal(HasMetadata on, String reason, String message) {
        record(on, "Normal", reason, message);
    }

    public void warning(HasMetadata on, String reason, String message) {
        record(on, "Warning", reason, message);
    }

    /**
     * Spec fields this operator does not know (a newer CRD): reconciled without them, said once per change in the log
     * and as a Warning Event {@value #UNKNOWN_FIELDS}.
     */
    public void unknownFields(HasMetadata on, java.util.Set<String> names) {
        if (names.isEmpty()) {
            return;
        }
        String message = "spec fields not known to this operator version, ignored: "
                + String.join(", ", new java.util.TreeSet<>(names));
        String key = on.getMetadata().getUid() + "/" + UNKNOWN_FIELDS;
        if (!message.equals(lastByObjectAndReason.get(key))) {
            LOG.atWarn()
                    .addKeyValue("kind", on.getKind())
                    .addKeyValue("name", on.getMetadata().getName())
                    .addKeyValue("namespace", on.getMetadata().getNamespace())
                    .log(message);
        }
        warning(on, UNKNOWN_FIELDS, message);
    }

    /** Forget what was written for an object (it was deleted). */
    public void forget(HasMetadata on) {
        String prefix = on.getMetadata().getUid() + "/";
        lastByObjectAndReason.keySet().removeIf(k -> k.startsWith(prefix));
    }

    /** Forgets what was written for every object whose uid is not in {@code live}. */
    public void retain(java.util.Set<String> live) {
        lastByObjectAndReason.keySet().removeIf(k -> !live.contains(k.substring(0, k.indexOf('/'))));
    }

    /** (object, reason) pairs remembered. */
    public int remembered() {
        return lastByObjectAndReason.size();
    }

    private void record(HasMetadata on, String type, String reason, String message) {
        String key = on.getMetadata().getUid() + "/" + reason;
        if (Objects.equals(lastByObjectAndReason.put(key, message), message)) {
            return;
        }
        String now = Instant.now(clock).truncatedTo(ChronoUnit.SECONDS).toString();
        Event event = new EventBuilder()
                .withNewMetadata()
                .withName(on.getMetadata().getName() + "."
                        + Long.toHexString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE))
                .withNamespace(on.getMetadata().getNamespace())
                .endMetadata()
                .withNewInvolvedObject()
                .withApiVersion(on.getApiVersion())
                .withKind(on.getKind())
                .withName(on.getMetadata().getName())
                .withNamespace(on.getMetadata().getNamespace())
                .withUid(on.getMetadata().getUid())
                .endInvolvedObject()
                .withType(type)
                .withReason(reason)
                .withMessage(message.length() > 1000 ? message.substring(0, 1000) + "..." : message)
                .withNewSource()
                .withComponent(COMPONENT)
                .endSource()
                .withReportingComponent(COMPONENT)
                .withFirstTimestamp(now)
                .withLastTimestamp(now)
                .withCount(1)
                .build();
        try {
            client.v1()
                    .events()
                    .inNamespace(on.getMetadata().getNamespace())
                    .resource(event)
                    .create();
        } catch (RuntimeException e) {
            LOG.atDebug()
                    .addKeyValue("reason", reason)
                    .addKeyValue("error", e.getMessage())
                    .log("event not written");
        }
    }
}

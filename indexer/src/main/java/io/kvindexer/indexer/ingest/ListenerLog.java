package io.kvindexer.indexer.ingest;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** The log lines of one listener: a malformed stream is logged once per kind, not once per message. */
final class ListenerLog {

    private static final System.Logger LOG = System.getLogger(EngineListener.class.getName());

    private final ListenerSpec spec;
    private final Set<String> loggedOnce = ConcurrentHashMap.newKeySet();

    ListenerLog(ListenerSpec spec) {
        this.spec = spec;
    }

    String workerName() {
        return "worker " + Long.toUnsignedString(spec.instanceId()) + " dp_rank " + spec.dpRank();
    }

    void once(String kind, String message) {
        if (loggedOnce.add(kind)) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "{0} ({1}): {2} (logged once per kind)",
                    workerName(),
                    spec.endpoint(),
                    message);
        }
    }

    void warn(String message) {
        LOG.log(System.Logger.Level.WARNING, "{0}: {1}", workerName(), message);
    }

    void info(String message) {
        LOG.log(System.Logger.Level.INFO, "{0}: {1}", workerName(), message);
    }

    void error(String message) {
        LOG.log(System.Logger.Level.ERROR, "{0} failed: {1}", workerName(), message);
    }
}

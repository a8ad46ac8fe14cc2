package io.kvindexer.indexer.recovery;

import io.kvindexer.indexer.dump.SavedRegistration;
import java.util.List;

/**
 * What startup recovery brought, checked but not yet installed: the trees (staged, or parsed from JSON) and the
 * registrations with their watermarks (none from a JSON or version 1 dump). {@code install} puts the trees into the
 * live indexes; the registry runs it under its lock ({@code WorkerRegistry.finishRecovery}), so that an
 * {@code /unregister} during recovery wins whatever the order.
 *
 * @param source  where it came from, for the log (a peer URL, a snapshot file)
 * @param indexes how many (model, tenant) indexes
 */
public record Recovered(String source, int indexes, List<SavedRegistration> registrations, Runnable install) {

    public Recovered {
        registrations = List.copyOf(registrations);
    }

    /** {@code "3 indexes, 2 registrations"}: what the log says was recovered. */
    public String counts() {
        return indexes + " indexes, " + registrations.size() + " registrations";
    }
}

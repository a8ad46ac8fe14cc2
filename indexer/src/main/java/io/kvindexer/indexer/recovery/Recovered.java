package io.kvindexer.indexer.recovery;

import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.dump.SavedRegistration;
import io.kvindexer.indexer.registry.DetachedWorker;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What startup recovery brought, checked but not yet installed: the trees (staged, or parsed from JSON) and the
 * registrations with their watermarks (none from a JSON or version 1 dump). {@code install} puts the trees into the
 * live indexes; the registry runs it under its lock ({@code WorkerRegistry.finishRecovery}), so that an
 * {@code /unregister} during recovery wins whatever the order.
 *
 * @param source  where it came from, for the log (a peer URL, a snapshot file)
 * @param indexes how many (model, tenant) indexes
 * @param blank   from a blank peer ({@code docs/concepts.md}): it has seen nothing from before its own start
 * @param detached the workers {@code --unregister-grace} kept detached (only a snapshot carries them)
 * @param fromSnapshot the ranks of {@code registrations} whose watermark is a snapshot's: this replica's own
 *                 snapshot gave it, or a peer's dump marked it as its own snapshot's not proven since; as old as that
 *                 replica's downtime, where a peer's other watermarks meet the live stream (docs/concepts.md,
 *                 exactness)
 */
public record Recovered(
        String source,
        int indexes,
        List<SavedRegistration> registrations,
        Runnable install,
        boolean blank,
        List<DetachedWorker> detached,
        Set<WorkerKey> fromSnapshot) {

    public Recovered {
        registrations = List.copyOf(registrations);
        detached = List.copyOf(detached);
        fromSnapshot = Set.copyOf(fromSnapshot);
    }

    /**
     * A dump's: the ranks its writer marked {@link SavedRegistration#fromSnapshot} (a version 6 peer dump) are
     * snapshot watermarks here too, so that a snapshot's watermark does not turn current by passing through a peer.
     */
    public Recovered(String source, int indexes, List<SavedRegistration> registrations, Runnable install) {
        this(source, indexes, registrations, install, false, List.of(), marked(registrations));
    }

    private static Set<WorkerKey> marked(List<SavedRegistration> registrations) {
        Set<WorkerKey> ranks = new HashSet<>();
        registrations.stream().filter(SavedRegistration::fromSnapshot).forEach(s -> ranks.add(rank(s)));
        return ranks;
    }

    /** The same, marked as a blank peer's. */
    public Recovered asBlank() {
        return new Recovered(source, indexes, registrations, install, true, detached, fromSnapshot);
    }

    /**
     * The same as this replica's own snapshot brought it: every registration's watermark is the snapshot's, and the
     * workers {@code --unregister-grace} kept detached come from its grace file.
     */
    public Recovered fromSnapshot(List<DetachedWorker> workers) {
        Set<WorkerKey> ranks = new HashSet<>();
        registrations.forEach(s -> ranks.add(rank(s)));
        return new Recovered(source, indexes, registrations, install, blank, workers, ranks);
    }

    /** Whether it brings anything at all: a blank peer's dump that brings nothing leaves its taker blank too. */
    public boolean bringsState() {
        return !blank && (indexes > 0 || !registrations.isEmpty());
    }

    /**
     * This (a snapshot) with the registrations a blank peer learned since its start added: those of worker ranks the
     * snapshot does not have, with the peer's watermark (the peer has stored no block, so nothing before it is
     * missing). A rank both have keeps the snapshot's registration, whose watermark matches the snapshot's tree
     * (and is the snapshot's: {@link #fromSnapshot} stays as it is, the peer's are current: a blank peer restored
     * none).
     */
    public Recovered with(Recovered blankPeer) {
        Set<WorkerKey> ranks = new HashSet<>();
        registrations.forEach(s -> ranks.add(rank(s)));
        List<SavedRegistration> all = new ArrayList<>(registrations);
        blankPeer.registrations().stream().filter(s -> !ranks.contains(rank(s))).forEach(all::add);
        return new Recovered(
                source + " and the registrations of " + blankPeer.source(),
                indexes,
                all,
                install,
                false,
                detached,
                fromSnapshot);
    }

    private static WorkerKey rank(SavedRegistration s) {
        return new WorkerKey(s.instanceId(), s.dpRank());
    }

    /** {@code "3 indexes, 2 registrations"}: what the log says was recovered. */
    public String counts() {
        return indexes + " indexes, " + registrations.size() + " registrations";
    }
}

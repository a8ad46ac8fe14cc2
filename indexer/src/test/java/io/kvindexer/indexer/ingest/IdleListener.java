package io.kvindexer.indexer.ingest;

/**
 * A listener stand-in that reads nothing and cannot be paused or resumed: for tests of what the registry does with
 * its listeners (limits, exactness) without engines.
 */
public record IdleListener(ListenerSnapshot snapshot, Exactness exactness) implements RunningListener {

    /** Pending at {@code spec}'s endpoint, always exact. */
    public static IdleListener pending(ListenerSpec spec) {
        return new IdleListener(
                new ListenerSnapshot(spec.endpoint(), ListenerStatus.PENDING, null, false, null),
                Exactness.untracked());
    }

    @Override
    public boolean pause() {
        return false;
    }

    @Override
    public boolean resume() {
        return false;
    }

    @Override
    public void close() {}
}

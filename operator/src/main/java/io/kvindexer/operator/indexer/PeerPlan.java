package io.kvindexer.operator.indexer;

import java.util.Collection;
import java.util.List;

/** What to change in one replica's peer list: pure, so it is tested on its own. */
public record PeerPlan(List<String> toRegister, List<String> toDeregister) {

    /** Desired = every other replica's stable URL; anything else in the replica's list goes. */
    public static PeerPlan of(Collection<String> desired, Collection<String> actual) {
        return new PeerPlan(
                desired.stream().filter(u -> !actual.contains(u)).sorted().toList(),
                actual.stream().filter(u -> !desired.contains(u)).sorted().toList());
    }

    public boolean isEmpty() {
        return toRegister.isEmpty() && toDeregister.isEmpty();
    }
}

package io.kvindexer.indexer.registry;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** The peer URLs (set semantics, insertion order kept). Only startup recovery reads them, as in Dynamo. */
public final class PeerRegistry {

    private final Set<String> peers = new LinkedHashSet<>();

    /** Adds a URL exactly as given; a duplicate is a no-op. */
    public synchronized void add(String url) {
        peers.add(url);
    }

    /** Adds a URL unless {@code max} others are already kept; false when that limit refused it. */
    public synchronized boolean addWithin(String url, int max) {
        if (!peers.contains(url) && peers.size() >= max) {
            return false;
        }
        peers.add(url);
        return true;
    }

    /** True when the URL was present. */
    public synchronized boolean remove(String url) {
        return peers.remove(url);
    }

    public synchronized List<String> list() {
        return List.copyOf(peers);
    }
}

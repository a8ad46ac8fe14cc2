package io.kvindexer.indexer.index;

import java.util.Objects;

/**
 * Some of one worker's blocks stored with one cache salt ({@code --mix-cache-salt}), by engine hash: what a worker
 * kept by {@code --unregister-grace} takes along, so that a store under one of them after its comeback is hashed with
 * the salt as before ({@link CacheSalts}).
 */
public record SaltedBlocks(String salt, long[] blockHashes) {
    public SaltedBlocks {
        Objects.requireNonNull(salt, "salt");
        Objects.requireNonNull(blockHashes, "blockHashes");
    }
}

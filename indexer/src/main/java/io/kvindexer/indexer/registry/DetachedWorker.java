package io.kvindexer.indexer.registry;

import io.kvindexer.indexer.dump.SavedRegistration;
import io.kvindexer.indexer.index.IndexOp;
import io.kvindexer.indexer.index.SaltedBlocks;
import io.kvindexer.indexer.index.StoreTimes;
import java.util.List;
import java.util.Objects;

/**
 * A worker rank whose blocks {@code --unregister-grace} keeps detached, as a snapshot carries it across a restart:
 * where it was registered with the seq watermark its stream had reached (so that its comeback replays the gap), when
 * its grace period ends on the wall clock (a restart does not start it over), its memberships as recovered stores in
 * dump order, their last-store times on the tiers with a TTL, and with {@code --mix-cache-salt} the salts of its
 * salted blocks.
 *
 * @param registration   its endpoint, (model, tenant), block size, watermark and the batch at it; replay endpoint
 *                       and pod name unused
 * @param expiresAtMillis the end of its grace period, epoch millis
 */
public record DetachedWorker(
        SavedRegistration registration,
        long expiresAtMillis,
        List<IndexOp> ops,
        StoreTimes times,
        List<SaltedBlocks> salts) {

    public DetachedWorker {
        Objects.requireNonNull(registration, "registration");
        ops = List.copyOf(ops);
        Objects.requireNonNull(times, "times");
        salts = List.copyOf(salts);
    }

    /** One without salted blocks. */
    public DetachedWorker(SavedRegistration registration, long expiresAtMillis, List<IndexOp> ops, StoreTimes times) {
        this(registration, expiresAtMillis, ops, times, List.of());
    }
}

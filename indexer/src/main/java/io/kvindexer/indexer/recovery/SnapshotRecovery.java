package io.kvindexer.indexer.recovery;

import io.kvindexer.indexer.dump.BinaryDump;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.registry.DetachedWorker;
import io.kvindexer.indexer.snapshot.GraceFile;
import io.kvindexer.indexer.snapshot.SnapshotFiles;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

/**
 * Startup from {@code --snapshot-dir} when no peer answered (or only blank ones): the newest snapshot that verifies
 * completely, else the one before it, else nothing. A damaged file (truncated, a flipped bit, unreadable) or one of a
 * newer format version (a rollback: left in place) is logged and counted and never installs anything: it is staged like a peer's binary dump, which goes
 * live only after its END frame verified.
 */
public final class SnapshotRecovery {

    private static final System.Logger LOG = System.getLogger(SnapshotRecovery.class.getName());

    private SnapshotRecovery() {}

    /**
     * The newest good snapshot of {@code dir}, staged; null when there is none.
     *
     * @param events told {@code loaded} or {@code damaged} per file tried (a metric)
     */
    public static Recovered load(Path dir, Indexers indexers, Duration timeout, Consumer<String> events)
            throws InterruptedException {
        return load(dir, indexers, timeout, events, file -> {});
    }

    /**
     * {@link #load(Path, Indexers, Duration, Consumer)}, telling {@code readWhole} the file it loaded: it was read
     * through and verified, so the snapshot writer's pruning need not read it again.
     */
    public static Recovered load(
            Path dir, Indexers indexers, Duration timeout, Consumer<String> events, Consumer<Path> readWhole)
            throws InterruptedException {
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            // (newestFirst finds nothing there, and "no snapshot" would hide the mistake)
            LOG.log(
                    System.Logger.Level.WARNING,
                    "--snapshot-dir {0} is not a directory: no snapshot can be read from it; starting empty",
                    dir);
            return null;
        }
        List<Path> files;
        try {
            files = new SnapshotFiles(dir).newestFirst();
        } catch (IOException | RuntimeException e) {
            damaged(events, "cannot list snapshots in {0}: {1}; starting empty", dir, e.toString());
            return null;
        }
        for (Path file : files) {
            try (InputStream in = new BufferedInputStream(Files.newInputStream(file), 1 << 16)) {
                Recovered r = BinaryDumpApplier.stage(in, indexers, timeout.toMillis(), file.toString());
                events.accept("loaded");
                readWhole.accept(file);
                LOG.log(System.Logger.Level.INFO, "snapshot {0} loaded ({1})", file, r.counts());
                return r.fromSnapshot(detached(SnapshotFiles.graceOf(file)));
            } catch (BinaryDump.NewerVersionException e) {
                damaged(
                        events,
                        "snapshot {0} is of a newer kv-indexer, not loaded (it stays for that version): {1}",
                        file,
                        e.getMessage());
            } catch (IOException | RuntimeException e) {
                damaged(events, "snapshot {0} is unusable, nothing of it is installed: {1}", file, e.getMessage());
            }
        }
        if (files.isEmpty()) {
            LOG.log(System.Logger.Level.INFO, "no snapshot in {0}; starting empty", dir);
        } else {
            LOG.log(System.Logger.Level.WARNING, "no usable snapshot in {0}; starting empty", dir);
        }
        return null;
    }

    /**
     * The workers {@code --unregister-grace} kept detached when the snapshot was written, from its grace file; none
     * when there is none, or when it does not read back (the snapshot itself is good: only those blocks are lost).
     */
    private static List<DetachedWorker> detached(Path grace) {
        if (!Files.exists(grace)) {
            return List.of();
        }
        try (InputStream in = new BufferedInputStream(Files.newInputStream(grace), 1 << 16)) {
            List<DetachedWorker> workers = GraceFile.read(in);
            LOG.log(
                    System.Logger.Level.INFO,
                    "{0} loaded: {1} unregistered worker ranks whose blocks --unregister-grace keeps",
                    grace,
                    workers.size());
            return workers;
        } catch (IOException | RuntimeException e) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "{0} is unusable ({1}): the blocks --unregister-grace kept for unregistered workers are not"
                            + " restored",
                    grace,
                    e.getMessage());
            return List.of();
        }
    }

    /** Counts a {@code damaged} event and warns {@code message} about {@code where} and its {@code problem}. */
    private static void damaged(Consumer<String> events, String message, Path where, String problem) {
        events.accept("damaged");
        LOG.log(System.Logger.Level.WARNING, message, where, problem);
    }
}

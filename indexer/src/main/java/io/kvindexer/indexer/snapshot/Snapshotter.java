package io.kvindexer.indexer.snapshot;

import io.kvindexer.indexer.common.Durations;
import io.kvindexer.indexer.common.IoErrors;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.registry.WorkerRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * {@code --snapshot-dir} and {@code --snapshot-interval}: every interval, a {@link StateCut} written atomically as
 * the next file of {@link SnapshotFiles}; once more when the replica shuts down; and soon after a registration
 * changes, so that a crash within the interval neither forgets a {@code /register} it answered nor brings back an
 * instance it unregistered (whose blocks nothing would remove). A write that fails (a directory that is not writable,
 * a full disk) is logged and counted, and the next interval tries again; the service goes on.
 */
public final class Snapshotter implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(Snapshotter.class.getName());
    /** all of a cut's waits together (the unregisters in flight, the index writers) */
    static final Duration CUT_PATIENCE = Duration.ofSeconds(30);
    /** From a registration change to its snapshot: a burst of them (an operator's resync) is written once. */
    static final Duration AFTER_CHANGE = Duration.ofSeconds(1);

    /**
     * One written snapshot: where, how many bytes, the most of them held in memory at once, the usable space left
     * beside it (-1: the file system does not say), how long the cut took (streamed into the temporary file as it was
     * walked) and how long forcing it to disk and renaming it.
     */
    public record Written(
            Path file, long bytes, long mostHeldBytes, long freeBytes, double cutSeconds, double writeSeconds) {}

    /**
     * Told the newest snapshot's directory, when it was written (epoch ms), its size and the usable space left beside
     * it (metrics): at start, of the newest file already there, then after each snapshot written.
     */
    @FunctionalInterface
    public interface Sizes {
        void newest(Path dir, long writtenMillis, long bytes, long freeBytes);
    }

    private final SnapshotFiles files;
    private final Duration interval;
    private final WorkerRegistry workers;
    private final Indexers indexers;
    private final Consumer<String> events;
    private final Sizes sizes;
    private volatile ScheduledExecutorService timer;
    /** closed: a start that comes late (a startup recovery that outlived the close) starts nothing */
    private boolean closed;
    /** a write for a registration change is scheduled and has not started */
    private final AtomicBoolean changePending = new AtomicBoolean();
    /** how long the last write took: a change's write waits at least that long, so churn never writes back to back */
    private volatile long lastWriteNanos;

    /**
     * Takes the directory ({@link SnapshotFiles#lock}) at once, so a second replica pointed at it fails at startup.
     *
     * @param events told {@code written} or {@code write_failed} after each attempt (a metric)
     * @param sizes  told the newest snapshot's size and the space left beside it (metrics)
     * @throws IllegalStateException another process writes into {@code dir}
     */
    public Snapshotter(
            Path dir,
            Duration interval,
            WorkerRegistry workers,
            Indexers indexers,
            Consumer<String> events,
            Sizes sizes) {
        this.files = new SnapshotFiles(dir);
        this.interval = interval;
        this.workers = workers;
        this.indexers = indexers;
        this.events = events;
        this.sizes = sizes;
        try {
            files.lock();
        } catch (SnapshotFiles.InUseException e) {
            throw new IllegalStateException(e.getMessage(), e);
        } catch (IOException e) {
            // a volume that is not writable yet: every snapshot tries again, and is counted when it fails
            LOG.log(
                    System.Logger.Level.WARNING,
                    "--snapshot-dir {0} cannot be used now ({1}); each snapshot tries again",
                    dir,
                    IoErrors.describe(e, dir));
        }
        reportNewest();
    }

    /**
     * The newest snapshot already in the directory, as the metrics' first figures (none: nothing yet); and the
     * unfinished write a crash left, which startup passes over, in the log.
     */
    private void reportNewest() {
        try {
            for (Path t : files.unfinished()) {
                LOG.log(
                        System.Logger.Level.WARNING,
                        "{0} is an unfinished snapshot ({1} bytes; the process stopped while writing it): it is"
                                + " ignored, and deleted when the next snapshot is written",
                        t,
                        String.valueOf(Files.size(t)));
            }
            List<Path> newest = files.newestFirst();
            if (!newest.isEmpty()) {
                Path file = newest.getFirst();
                sizes.newest(
                        files.dir(), Files.getLastModifiedTime(file).toMillis(), Files.size(file), files.usableSpace());
            }
        } catch (IOException e) {
            // an unreadable directory: the first snapshot written reports it
        }
    }

    /**
     * Startup recovery loaded {@code file} from this directory, reading all of it: the pruning after the next write
     * keeps it without a second read (on a big snapshot, seconds of disk and CPU).
     */
    public void loaded(Path file) {
        files.readBackWhole(file);
    }

    /** Starts the periodic writes (the first after one interval). */
    public synchronized void start() {
        if (timer != null || closed) {
            return;
        }
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "snapshot-writer");
            t.setDaemon(true);
            return t;
        });
        long ms = Math.max(1, interval.toMillis());
        timer.scheduleWithFixedDelay(() -> writeLogged(false), ms, ms, TimeUnit.MILLISECONDS);
        workers.onChange(this::registrationsChanged);
    }

    /**
     * A registration came or went: write a snapshot {@link #AFTER_CHANGE} from now (or after as long as the last one
     * took), unless one is already due. Runs on the caller's thread, so it only schedules.
     */
    private void registrationsChanged() {
        ScheduledExecutorService t = timer;
        if (t == null || !changePending.compareAndSet(false, true)) {
            return;
        }
        long delay = Math.max(AFTER_CHANGE.toNanos(), lastWriteNanos);
        try {
            t.schedule(
                    () -> {
                        changePending.set(false); // a change from now on is in this cut or gets one of its own
                        writeLogged(false);
                    },
                    delay,
                    TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            changePending.set(false); // closing: the last snapshot at shutdown has it
        }
    }

    /** Takes a cut and writes it; throws when either fails (the previous snapshots are untouched then). */
    public synchronized Written write() throws IOException, InterruptedException {
        long t0 = System.nanoTime();
        StateCut.Size[] cut = new StateCut.Size[1];
        long[] cutEnd = new long[1];
        Path file = files.write(
                out -> {
                    cut[0] = StateCut.write(workers, indexers, CUT_PATIENCE, out);
                    cutEnd[0] = System.nanoTime();
                },
                out -> {
                    // the blocks --unregister-grace keeps detached, and when their grace ends: a restart keeps both
                    if (!cut[0].detached().isEmpty()) {
                        GraceFile.write(cut[0].detached(), out);
                    }
                });
        long t2 = System.nanoTime();
        lastWriteNanos = t2 - t0;
        return new Written(
                file,
                cut[0].bytes(),
                cut[0].mostHeld(),
                files.usableSpace(),
                (cutEnd[0] - t0) / 1e9,
                (t2 - cutEnd[0]) / 1e9);
    }

    /** Writes one snapshot and logs (and counts) how it went; {@code last}: the one at shutdown, with no next try. */
    private void writeLogged(boolean last) {
        try {
            Written w = write();
            events.accept("written");
            sizes.newest(files.dir(), System.currentTimeMillis(), w.bytes(), w.freeBytes());
            LOG.log(
                    System.Logger.Level.DEBUG,
                    "snapshot {0}: {1} bytes, at most {2} held in memory (cut {3} s, forced and renamed {4} s)",
                    w.file(),
                    w.bytes(),
                    w.mostHeldBytes(),
                    w.cutSeconds(),
                    w.writeSeconds());
        } catch (IOException | RuntimeException e) {
            events.accept("write_failed");
            LOG.log(
                    System.Logger.Level.WARNING,
                    "{0} into {1} failed (the previous ones are kept{2}): {3}",
                    last ? "the last snapshot, at shutdown," : "snapshot",
                    files.dir(),
                    last
                            ? "; a restart starts from the newest of them"
                            : "; trying again in " + Durations.format(interval),
                    e instanceof IOException io ? IoErrors.describe(io, files.dir()) : e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops the timer and writes one last snapshot, so a clean restart starts from the state at shutdown. */
    @Override
    public void close() {
        ScheduledExecutorService t;
        synchronized (this) {
            t = timer;
            timer = null;
            closed = true;
        }
        try {
            if (t == null) {
                return;
            }
            t.shutdownNow();
            try {
                t.awaitTermination(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            writeLogged(true);
        } finally {
            files.unlock();
        }
    }
}

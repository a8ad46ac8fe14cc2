package io.kvindexer.indexer.snapshot;

import io.kvindexer.indexer.common.IoErrors;
import io.kvindexer.indexer.dump.BinaryDump;
import io.kvindexer.indexer.dump.BinaryDumpReader;
import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The snapshot directory: {@code snapshot-<n>.kvix} files, numbered upwards. A new one is written to a temporary
 * file, forced to disk, renamed into place and the directory forced, so a crash at any moment leaves either the old
 * set or the new one; then all but the newest {@link #KEPT} good ones are deleted, so the previous good snapshot is
 * kept until a newer one is complete (and is there to fall back to if the newest does not verify). A file that does
 * not read back (truncated, a flipped bit, unreadable) goes first: recovery would pass over it anyway, and keeping it
 * instead of an older good one would leave nothing to recover from. A file of a newer format version (a rollback)
 * is neither: it is left in place, uncounted, so that the version rolled back from still finds it. One process writes a
 * directory: it holds an OS lock on {@value #LOCK} in it while it runs, as two replicas numbering and pruning the
 * same files would overwrite each other's snapshots.
 */
public final class SnapshotFiles {

    private static final System.Logger LOG = System.getLogger(SnapshotFiles.class.getName());

    /** The newest and the one before it. */
    static final int KEPT = 2;

    private static final Pattern NAME = Pattern.compile("snapshot-(\\d{1,19})\\.kvix");
    /** a snapshot, a grace file, or the temporary file of either */
    private static final Pattern ANY_NAME = Pattern.compile("\\.?snapshot-(\\d{1,19})\\.(kvix|grace)(\\.tmp)?");

    private static final String TEMP_SUFFIX = ".tmp";
    private static final String GRACE_SUFFIX = ".grace";

    /** The file whose lock says the directory is in use; it holds the owner's process id. */
    public static final String LOCK = ".lock";

    /** The directory's lock is held by another process (or another replica in this one). */
    public static final class InUseException extends IOException {
        InUseException(String message) {
            super(message);
        }
    }

    /** How the directory's lock is taken: {@link FileChannel#tryLock()}, or a test's stand-in for a file system. */
    interface Locking {
        FileLock tryLock(FileChannel channel) throws IOException;
    }

    /** What is wrong with a snapshot file, read back whole; null when it is intact. */
    interface Check {
        String problem(Path file);
    }

    private final Path dir;
    private final Locking locking;
    private final Check check;
    /** files this process wrote or read back whole: a snapshot never changes once renamed into place */
    private final Set<Path> intact = ConcurrentHashMap.newKeySet();
    /** entries pruning could not delete: warned about once, then left alone */
    private final Set<Path> undeletable = ConcurrentHashMap.newKeySet();
    /** snapshots of a newer format version (a rollback): warned about once, then left for the version that reads them */
    private final Set<Path> newer = ConcurrentHashMap.newKeySet();

    private FileChannel lockFile;

    public SnapshotFiles(Path dir) {
        this(dir, FileChannel::tryLock, SnapshotFiles::readsBack);
    }

    SnapshotFiles(Path dir, Locking locking) {
        this(dir, locking, SnapshotFiles::readsBack);
    }

    SnapshotFiles(Path dir, Locking locking, Check check) {
        this.dir = dir;
        this.locking = locking;
        this.check = check;
    }

    public Path dir() {
        return dir;
    }

    /** Snapshot files, newest first; empty when the directory does not exist. */
    public List<Path> newestFirst() throws IOException {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "snapshot-*.kvix")) {
            for (Path p : files) {
                if (number(p) >= 0) {
                    out.add(p);
                }
            }
        }
        out.sort(Comparator.comparingLong(SnapshotFiles::number).reversed());
        return out;
    }

    /**
     * {@code file} was read through and verified elsewhere (startup recovery loaded it): pruning keeps it without
     * reading it again.
     */
    void readBackWhole(Path file) {
        intact.add(file);
    }

    /** Temporary files of writes that never finished (the process stopped mid-write); empty when there are none. */
    public List<Path> unfinished() throws IOException {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> temps = Files.newDirectoryStream(dir, ".snapshot-*" + TEMP_SUFFIX)) {
            temps.forEach(out::add);
        }
        out.sort(Comparator.naturalOrder());
        return out;
    }

    /**
     * Takes the directory for this process, creating it if need be; nothing when it already has it. The OS drops
     * the lock when the process dies, so a crashed replica never keeps its successor out.
     *
     * @throws InUseException another process holds it: the message names its process id
     */
    synchronized void lock() throws IOException {
        if (lockFile != null) {
            return;
        }
        Files.createDirectories(dir);
        Path path = dir.resolve(LOCK);
        FileChannel ch = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock held;
        try {
            held = locking.tryLock(ch);
        } catch (OverlappingFileLockException e) {
            held = null; // another replica in this JVM (tests) holds it
        } catch (IOException e) {
            // a file system without locks (some NFS mounts, FUSE): snapshots work on, without the check
            LOG.log(
                    System.Logger.Level.WARNING,
                    "cannot lock {0} ({1}): snapshots go on without the one-replica-per-directory check",
                    path,
                    IoErrors.describe(e, path));
            lockFile = ch;
            return;
        }
        if (held == null) {
            ch.close();
            String owner = Files.readString(path, StandardCharsets.UTF_8).strip();
            throw new InUseException("--snapshot-dir " + dir + " is in use by another kv-indexer"
                    + (owner.isEmpty() ? "" : " (process " + owner + ")")
                    + ": give each replica a directory of its own");
        }
        ch.truncate(0);
        ch.write(ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.UTF_8)));
        lockFile = ch;
    }

    /** Lets the directory go (closing the channel releases its lock). */
    synchronized void unlock() {
        if (lockFile != null) {
            try {
                lockFile.close();
            } catch (IOException e) {
                // closing releases the lock even when it reports an error
            }
            lockFile = null;
        }
    }

    /** What goes into a snapshot file, written as it is produced. */
    @FunctionalInterface
    interface Content {
        void writeTo(OutputStream out) throws IOException, InterruptedException;
    }

    /**
     * Writes {@code content} as the next snapshot; returns its path. The content streams into the temporary file;
     * when it fails, the file is deleted and the snapshots already there are left as they were.
     */
    Path write(Content content) throws IOException, InterruptedException {
        return write(content, null);
    }

    /**
     * {@link #write(Content)} with {@code beside} (null: none), written after {@code content} into the snapshot's
     * {@link #graceOf grace file} when it writes anything. The grace file is in place before the snapshot is, so a
     * snapshot never goes without the grace file it was written with.
     */
    Path write(Content content, Content beside) throws IOException, InterruptedException {
        lock();
        long next = highestNumber() + 1;
        Path target = dir.resolve(String.format("snapshot-%019d.kvix", next));
        Path temp = dir.resolve("." + target.getFileName() + TEMP_SUFFIX);
        Path grace = graceOf(target);
        Path graceTemp = dir.resolve("." + grace.getFileName() + TEMP_SUFFIX);
        // a crash between the two renames left a grace file without its snapshot: it is not this one's
        Files.deleteIfExists(grace);
        try {
            writeForced(temp, content);
            if (beside != null && writeForced(graceTemp, beside) > 0) {
                Files.move(graceTemp, grace, StandardCopyOption.ATOMIC_MOVE);
            }
        } catch (IOException | InterruptedException | RuntimeException e) {
            Files.deleteIfExists(temp);
            Files.deleteIfExists(graceTemp);
            Files.deleteIfExists(grace);
            throw e;
        } finally {
            Files.deleteIfExists(graceTemp); // (nothing written: no grace file)
        }
        Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE);
        forceDirectory();
        intact.add(target);
        prune();
        return target;
    }

    /**
     * The highest number any entry of the naming scheme carries (snapshots, grace files and their temporary files),
     * 0 when there is none: the next write's paths are then all free, so a leftover that cannot be overwritten or
     * deleted (a directory named like a temporary file) does not fail every write after it.
     */
    private long highestNumber() throws IOException {
        long highest = 0;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, "*snapshot-*")) {
            for (Path p : entries) {
                Matcher m = ANY_NAME.matcher(p.getFileName().toString());
                if (m.matches()) {
                    highest = Math.max(highest, ours(m.group(1)));
                }
            }
        }
        return highest;
    }

    /** Streams {@code content} into {@code file} and forces it to disk; returns its size. */
    private static long writeForced(Path file, Content content) throws IOException, InterruptedException {
        try (FileChannel ch = FileChannel.open(
                file, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
            OutputStream out = Channels.newOutputStream(ch);
            content.writeTo(out);
            out.flush();
            ch.force(true);
            return ch.size();
        }
    }

    /**
     * The file beside {@code snapshot} that holds the workers {@code --unregister-grace} kept detached when it was
     * written ({@link GraceFile}); there only when there were some.
     */
    public static Path graceOf(Path snapshot) {
        return snapshot.resolveSibling(snapshot.getFileName().toString().replace(".kvix", GRACE_SUFFIX));
    }

    /** The usable space of the directory's file system, in bytes; -1 when it does not say. */
    long usableSpace() {
        try {
            return Files.getFileStore(dir).getUsableSpace();
        } catch (IOException | SecurityException e) {
            return -1;
        }
    }

    /**
     * Keeps the newest {@link #KEPT} snapshots that read back whole and no temporary files (a crash mid-write leaves
     * one). Each older file is read back once per process (the one startup recovery loaded not at all:
     * {@link #readBackWhole}), and only while fewer than {@link #KEPT} good ones were found: the rest go unread.
     * What cannot be deleted (a directory with that name, say) is named in a warning once and left alone: the
     * snapshot just written is in place, so the write has not failed.
     */
    private void prune() {
        try {
            int kept = 0;
            for (Path p : newestFirst()) {
                if (undeletable.contains(p) || newer.contains(p)) {
                    continue;
                }
                if (kept < KEPT) {
                    String problem = intact.contains(p) ? null : check.problem(p);
                    if (problem == null) {
                        intact.add(p);
                        kept++;
                        continue;
                    }
                    if (writtenByNewer(p)) {
                        // after a rollback it may hold the only state there is: rolling forward again finds it
                        newer.add(p);
                        LOG.log(
                                System.Logger.Level.WARNING,
                                "snapshot {0} is of a newer format ({1}): left in place for that version, not"
                                        + " pruned; delete it by hand if you will not go back to that version",
                                p,
                                problem);
                        continue;
                    }
                    LOG.log(
                            System.Logger.Level.WARNING,
                            "snapshot {0} does not read back ({1}): deleted, so that the newest good snapshots are"
                                    + " kept",
                            p,
                            problem);
                }
                delete(p);
                intact.remove(p);
            }
            for (Path t : unfinished()) {
                delete(t);
            }
            try (DirectoryStream<Path> graces = Files.newDirectoryStream(dir, "snapshot-*" + GRACE_SUFFIX)) {
                for (Path g : graces) {
                    Path snapshot = g.resolveSibling(g.getFileName().toString().replace(GRACE_SUFFIX, ".kvix"));
                    if (!Files.exists(snapshot)) {
                        delete(g); // its snapshot is gone
                    }
                }
            }
        } catch (IOException e) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "cannot prune the old snapshots in {0} ({1}); the new one is in place",
                    dir,
                    IoErrors.describe(e, dir));
        }
    }

    /** Deletes {@code p}; one that cannot be deleted is warned about once and left out of pruning from then on. */
    private void delete(Path p) {
        if (undeletable.contains(p)) {
            return;
        }
        try {
            Files.deleteIfExists(p);
        } catch (IOException e) {
            undeletable.add(p);
            LOG.log(
                    System.Logger.Level.WARNING,
                    "cannot delete {0} ({1}): it is left in place and not pruned again; remove it by hand",
                    p,
                    IoErrors.describe(e, p));
        }
    }

    /** Reads {@code file} through as recovery would (every frame's checksum, every count), installing nothing. */
    static String readsBack(Path file) {
        try (InputStream in = new BufferedInputStream(Files.newInputStream(file), 1 << 16)) {
            BinaryDumpReader.read(in, NOTHING);
            return null;
        } catch (IOException | RuntimeException e) {
            return e instanceof IOException io ? IoErrors.describe(io, file) : e.toString();
        }
    }

    /**
     * Whether {@code file} starts with the header of a format version newer than this build reads. Only its first
     * bytes are read: the header's check comes before any frame.
     */
    static boolean writtenByNewer(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            BinaryDumpReader.read(new ByteArrayInputStream(in.readNBytes(64)), NOTHING);
            return false;
        } catch (BinaryDump.NewerVersionException e) {
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** Reads a stream through and keeps nothing of it. */
    private static final BinaryDumpReader.Visitor NOTHING = new BinaryDumpReader.Visitor() {};

    /** The rename is durable only once the directory entry is: force the directory itself (Linux allows it). */
    private void forceDirectory() {
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException e) {
            // some file systems refuse to open a directory; the rename itself is still atomic
        }
    }

    private static long number(Path p) {
        Matcher m = NAME.matcher(p.getFileName().toString());
        return m.matches() ? ours(m.group(1)) : -1;
    }

    /**
     * A name's number, -1 when this class cannot have written it: beyond a long, or the largest one, which no write
     * can number past (the next would overflow into a name nothing loads or prunes).
     */
    private static long ours(String digits) {
        try {
            long n = Long.parseLong(digits);
            return n == Long.MAX_VALUE ? -1 : n;
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}

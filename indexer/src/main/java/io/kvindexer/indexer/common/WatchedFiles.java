package io.kvindexer.indexer.common;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/**
 * Calls a reload when the content of any of a few small files changes, checked every interval. Polling the content
 * rather than watching events: Kubernetes updates a mounted Secret by swapping a {@code ..data} symlink in the
 * directory above the file, which a watch on the file's own directory entry does not report, and a digest also
 * ignores a rewrite with the same bytes. A reload that fails (a half-written pair of files) is tried again when
 * the content changes again, not at every check (the same bytes would fail the same way).
 */
public final class WatchedFiles implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(WatchedFiles.class.getName());

    /** Applies what the files now hold; false when they are not usable (the reload logs why). */
    @FunctionalInterface
    public interface Reload {
        boolean apply();
    }

    private final List<Path> files;
    private final Duration interval;
    private final Reload reload;
    private final Thread thread;
    private byte[] seen;

    private WatchedFiles(String name, List<Path> files, Duration interval, Reload reload) {
        this.files = List.copyOf(files);
        this.interval = interval;
        this.reload = reload;
        this.seen = digest();
        this.thread = Thread.ofVirtual().name("watch-" + name).start(this::run);
    }

    /** Starts checking {@code files} every {@code interval}; the current content counts as already applied. */
    public static WatchedFiles start(String name, List<Path> files, Duration interval, Reload reload) {
        return new WatchedFiles(name, files, interval, reload);
    }

    private void run() {
        try {
            while (!Thread.currentThread().isInterrupted()) {
                Thread.sleep(interval);
                byte[] now = digest();
                if (!Arrays.equals(now, seen)) {
                    seen = now;
                    try {
                        reload.apply();
                    } catch (RuntimeException e) {
                        LOG.log(System.Logger.Level.WARNING, "reloading " + files + " failed", e);
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** SHA-256 over every file's content (a missing file counts as a distinct, empty state). */
    private byte[] digest() {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            for (Path f : files) {
                try {
                    md.update(Files.readAllBytes(f));
                } catch (IOException e) {
                    md.update((byte) 0xFF);
                }
                md.update((byte) 0);
            }
            return md.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JDK", e);
        }
    }

    @Override
    public void close() {
        thread.interrupt();
    }
}

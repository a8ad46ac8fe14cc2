package io.kvindexer.indexer.common;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * The bearer tokens the indexer accepts: the current one and, for a grace period after a rotation, the one before
 * it. A token file that changes ({@link #reload}) makes its new content current at once; the old token keeps
 * working until the grace period ends, so clients that switch later (the operator, the other replicas, whose copy
 * of a Kubernetes Secret is refreshed at different moments) are never refused mid-rotation. Thread-safe: one
 * immutable state swapped atomically.
 */
public final class BearerTokens {

    private static final System.Logger LOG = System.getLogger(BearerTokens.class.getName());

    private record State(String current, byte[] currentBytes, byte[] previousBytes, long previousUntilNanos) {}

    private final Path file;
    private final Duration grace;
    private final LongSupplier nanoClock;
    private volatile State state;

    private BearerTokens(Path file, Duration grace, LongSupplier nanoClock, String token) {
        this.file = file;
        this.grace = grace;
        this.nanoClock = nanoClock;
        this.state = new State(token, bytes(token), null, 0);
    }

    /** One token for the life of the process ({@code KV_INDEXER_AUTH_TOKEN}, or a test's). */
    public static BearerTokens fixed(String token) {
        return new BearerTokens(null, Duration.ZERO, System::nanoTime, token);
    }

    /** The token in {@code file} (its trimmed content); {@link #reload} reads it again. */
    public static BearerTokens fromFile(Path file, Duration grace) throws IOException {
        return fromFile(file, grace, System::nanoTime);
    }

    static BearerTokens fromFile(Path file, Duration grace, LongSupplier nanoClock) throws IOException {
        return new BearerTokens(file, grace, nanoClock, read(file));
    }

    /** The file this token comes from; null for a fixed token. */
    public Path file() {
        return file;
    }

    /** How long the previous token is still accepted after a rotation ({@code --auth-token-grace}). */
    public Duration grace() {
        return grace;
    }

    /** The token to send to peers now. */
    public String current() {
        return state.current();
    }

    /**
     * Reads the file again; a new token ({@link #read}) becomes the current one and the old one is accepted for the
     * grace period. False when the file cannot be read or holds no token a header can carry ({@link #problem}); the
     * tokens then stay as they were, with a warning, and the caller tries again when the file changes, as a Secret
     * being rewritten can be briefly absent.
     */
    public synchronized boolean reload() {
        if (file == null) {
            return true;
        }
        String token;
        try {
            token = read(file);
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "--auth-token-file not re-read: {0}", e.getMessage());
            return false;
        }
        State s = state;
        if (!token.equals(s.current())) {
            state = new State(token, bytes(token), s.currentBytes(), nanoClock.getAsLong() + grace.toNanos());
            LOG.log(
                    System.Logger.Level.INFO,
                    "bearer token rotated from {0}; the previous token is accepted for {1}",
                    file,
                    Durations.format(grace));
        }
        return true;
    }

    /** True when {@code token} (the credentials of a Bearer header) is accepted now; constant time per token. */
    public boolean accepts(String token) {
        byte[] given = bytes(token);
        State s = state;
        boolean ok = MessageDigest.isEqual(s.currentBytes(), given);
        if (s.previousBytes() != null && nanoClock.getAsLong() - s.previousUntilNanos() < 0) {
            ok |= MessageDigest.isEqual(s.previousBytes(), given);
        }
        return ok;
    }

    private static byte[] bytes(String token) {
        return token.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The token in {@code file}: its content, trimmed. The one rule for a token file, at startup and at every reload.
     *
     * @throws IOException "cannot read FILE: why", or "FILE is empty", or "FILE holds N lines; ...", or "FILE holds
     *     U+XXXX at character N; ..."
     */
    public static String read(Path file) throws IOException {
        String content;
        try {
            content = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IOException("cannot read " + file + ": " + IoErrors.describe(e, file), e);
        }
        String problem = problem(content);
        if (problem != null) {
            throw new IOException(file + " " + problem);
        }
        return content.strip();
    }

    /**
     * What keeps {@code content} (a token file's, or {@code KV_INDEXER_AUTH_TOKEN}) from being a token once trimmed,
     * or null: empty, more than one line, or a character outside printable ASCII, none of which an
     * {@code Authorization} header can carry (a header ends at its line break; the server reads header values as
     * US-ASCII, and browsers send nothing past Latin-1), so every client would be refused.
     */
    public static String problem(String content) {
        String token = content.strip();
        if (token.isEmpty()) {
            return "is empty";
        }
        long lines = token.lines().filter(line -> !line.isBlank()).count();
        if (lines > 1) {
            return "holds " + lines + " lines; a bearer token is one line";
        }
        for (int i = 0; i < token.length(); ) {
            int c = token.codePointAt(i);
            if ((c < 0x20 && c != '\t') || c > 0x7e) {
                return String.format(
                        "holds U+%04X at character %d; a bearer token is printable ASCII (no Authorization header"
                                + " carries other characters)",
                        c, token.codePointCount(0, i) + 1);
            }
            i += Character.charCount(c);
        }
        return null;
    }
}

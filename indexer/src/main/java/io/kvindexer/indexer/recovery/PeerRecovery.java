package io.kvindexer.indexer.recovery;

import io.kvindexer.indexer.common.PlainHttpToTls;
import io.kvindexer.indexer.dump.BinaryDump;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.tls.CertificateRefusal;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Startup recovery from peers ({@code docs/compatibility.md}, "Startup, recovery and readiness"): wait a moment so
 * the listeners' subscriptions reach the publishers, then fetch {@code <peer>/dump} from each peer in order; the first
 * that answers with a valid dump wins. Every outcome lets startup continue; with no reachable peer the index starts
 * empty.
 *
 * <p>The binary dump ({@link BinaryDump}) is asked for first. A peer that answers JSON anyway (a Dynamo indexer
 * ignores the {@code Accept}) is read as JSON from the same response; a binary answer that fails (truncated,
 * corrupted, another version) is followed by one plain JSON request to the same peer before the next peer.
 */
public final class PeerRecovery {

    private static final System.Logger LOG = System.getLogger(PeerRecovery.class.getName());

    /** How a recovery ended. */
    public enum Result {
        SUCCEEDED,
        NO_REACHABLE_PEERS,
        SKIPPED
    }

    /** What to ask a peer for first. */
    public enum Format {
        BINARY,
        JSON
    }

    /**
     * How long busy peers ({@link PeerBusy}) are asked again, in peer timeouts (a minute at the default 10 s): enough
     * for the dumps they serve to end when many replicas start at once; the replica is not Ready meanwhile.
     */
    static final int BUSY_PATIENCE_TIMEOUTS = 6;

    /** The longest a busy peer's Retry-After is followed. */
    static final Duration MAX_RETRY_AFTER = Duration.ofSeconds(30);

    private final List<String> peers;
    private final Indexers indexers;
    private final Duration delay;
    private final Duration timeout;
    private final String authToken;
    private final Format format;
    private Path caFile;
    private boolean ownSnapshot;
    private int wholeBodyTimeouts = PeerBodyDeadline.WHOLE_BODY_TIMEOUTS;

    public PeerRecovery(List<String> peers, Indexers indexers, Duration delay, Duration timeout) {
        this(peers, indexers, delay, timeout, null);
    }

    /** With {@code authToken} non-null, every {@code /dump} request carries it as a bearer token. */
    public PeerRecovery(List<String> peers, Indexers indexers, Duration delay, Duration timeout, String authToken) {
        this(peers, indexers, delay, timeout, authToken, Format.BINARY);
    }

    public PeerRecovery(
            List<String> peers, Indexers indexers, Duration delay, Duration timeout, String authToken, Format format) {
        this.peers = List.copyOf(peers);
        this.indexers = indexers;
        this.delay = delay;
        this.timeout = timeout;
        this.authToken = authToken;
        this.format = format;
    }

    /** Trust {@code https://} peers by the CAs in {@code caFile} ({@code --tls-ca-file}); null: the JDK's. */
    public PeerRecovery trusting(Path caFile) {
        this.caFile = caFile;
        return this;
    }

    /**
     * This replica has a snapshot of its own to start from: a peer that is loading its snapshot (503
     * {@code recovering_from_peer} with a {@code Retry-After}) is not waited for, which also keeps two such
     * replicas, each the other's peer, from waiting on each other.
     */
    public PeerRecovery withOwnSnapshot(boolean ownSnapshot) {
        this.ownSnapshot = ownSnapshot;
        return this;
    }

    /**
     * Tests only: a peer's whole {@code /dump} body must be in within {@code timeouts} peer timeouts instead of
     * {@link PeerBodyDeadline#WHOLE_BODY_TIMEOUTS}, so a test of the bound need not sit out the product's.
     */
    PeerRecovery withWholeBodyBoundForTests(int timeouts) {
        this.wholeBodyTimeouts = timeouts;
        return this;
    }

    /** Fetches from the first peer that answers and installs its trees at once (no registry involved). */
    public Result run() throws InterruptedException {
        if (peers.isEmpty()) {
            return Result.SKIPPED;
        }
        Recovered r = fetch();
        if (r == null) {
            return Result.NO_REACHABLE_PEERS;
        }
        r.install().run();
        return Result.SUCCEEDED;
    }

    /**
     * Fetches from the first peer that answers with a valid dump, its registrations included when it has them; null
     * when none did. A blank peer's dump ({@link BinaryDump#BLANK_HEADER}) is returned only when no other peer
     * answers, marked {@link Recovered#blank()}: a replica's own snapshot is worth more. Nothing is installed yet
     * (see {@link Recovered}).
     */
    public Recovered fetch() throws InterruptedException {
        if (peers.isEmpty()) {
            return null;
        }
        long waitUntil = System.nanoTime() + delay.toNanos();
        // the client first, then what is left of the delay: a fresh JVM takes a few hundred ms to set up the JDK's
        // TLS defaults (for https:// peers; PeerHttpClients), which then no longer delay the first request
        // meanwhile a made-up dump warms the reader and the staging up (RecoveryWarmUp), on a thread of its own
        Thread warmUp = Thread.ofPlatform()
                .name("recovery-warm-up")
                .daemon()
                .start(() -> RecoveryWarmUp.run(indexers, waitUntil));
        try (HttpClient client = PeerHttpClients.create(timeout, caFile, peers)) {
            warmUp.join();
            long left = waitUntil - System.nanoTime();
            if (left > 0) {
                Thread.sleep(Duration.ofNanos(left));
            }
            Recovered firstBlank = null;
            List<String> ask = peers;
            long patientUntil = System.nanoTime()
                    + timeout.multipliedBy(BUSY_PATIENCE_TIMEOUTS).toNanos();
            while (!ask.isEmpty()) {
                List<String> busy = new ArrayList<>();
                Duration retryAfter = MAX_RETRY_AFTER;
                for (String peer : ask) {
                    try {
                        Recovered r = recoverFrom(client, peer);
                        if (r.blank()) {
                            LOG.log(
                                    System.Logger.Level.INFO,
                                    "P2P recovery: {0} is blank (it has seen nothing from before its own start: {1});"
                                            + " trying the next peer",
                                    peer,
                                    r.counts());
                            firstBlank = firstBlank == null ? r : firstBlank;
                            continue;
                        }
                        LOG.log(System.Logger.Level.INFO, "P2P recovery completed from {0} ({1})", peer, r.counts());
                        return r;
                    } catch (PeerBusy e) {
                        if (e.recovering && ownSnapshot) {
                            LOG.log(
                                    System.Logger.Level.WARNING,
                                    "P2P recovery from {0} failed: {1} (not waited for: this replica has a snapshot)",
                                    peer,
                                    e.getMessage());
                            continue;
                        }
                        busy.add(peer);
                        retryAfter = retryAfter.compareTo(e.retryAfter) < 0 ? retryAfter : e.retryAfter;
                        LOG.log(System.Logger.Level.INFO, "P2P recovery: {0} is busy ({1})", peer, e.getMessage());
                    } catch (IOException | RuntimeException e) {
                        LOG.log(System.Logger.Level.WARNING, "P2P recovery from {0} failed: {1}", peer, describe(e));
                    }
                }
                // a peer serving its other dumps has the state: ask it again rather than start without it
                if (busy.isEmpty() || System.nanoTime() + retryAfter.toNanos() - patientUntil > 0) {
                    if (!busy.isEmpty()) {
                        LOG.log(System.Logger.Level.WARNING, "P2P recovery: {0} still busy, not waiting longer", busy);
                    }
                    break;
                }
                LOG.log(System.Logger.Level.INFO, "P2P recovery: asking {0} again in {1}", busy, retryAfter);
                Thread.sleep(retryAfter);
                ask = busy;
            }
            if (firstBlank != null) {
                LOG.log(System.Logger.Level.INFO, "P2P recovery: only blank peers answered");
                return firstBlank;
            }
        }
        LOG.log(System.Logger.Level.WARNING, "P2P recovery: no reachable peers");
        return null;
    }

    /** Fetches and stages one peer's dump. */
    Recovered recoverFrom(HttpClient client, String peer) throws IOException, InterruptedException {
        if (format == Format.BINARY) {
            try {
                return fetch(client, peer, true);
            } catch (BinaryDump.FormatException e) {
                LOG.log(
                        System.Logger.Level.WARNING,
                        "binary dump of {0} unusable ({1}); asking for JSON",
                        peer,
                        e.getMessage());
            }
        }
        return fetch(client, peer, false);
    }

    /** A peer's non-2xx answer: its status, what its body said, and for a 401 what to set on this side. */
    static String refusal(URI uri, int status, String said, boolean sentToken) {
        String hint = status != 401
                ? ""
                : sentToken
                        ? " (this replica's token is not the peer's: give both the same --auth-token-file)"
                        : " (the peer wants a bearer token: give this replica its --auth-token-file)";
        return "GET " + uri + " answered " + status + (said.isEmpty() ? "" : " " + said) + hint;
    }

    /**
     * A failed recovery in one line; a refused certificate says why in words and what to change (the JDK's text
     * names a certificate path builder, and says "PKIX" for an expired certificate as for an unknown CA).
     */
    static String describe(Exception e) {
        if (PlainHttpToTls.detected(e)) {
            return PlainHttpToTls.HINT;
        }
        CertificateRefusal refused = CertificateRefusal.of(e);
        if (refused != null) {
            return certificateRefused(refused) + ": " + e.getMessage();
        }
        if (e instanceof ConnectException && e.getMessage() == null) {
            // the JDK's HTTP client says no more than the class name
            return "cannot connect (nothing answers there: the peer is down, or its host or port is wrong)";
        }
        return e.getMessage() != null && e instanceof IOException ? e.getMessage() : e.toString();
    }

    /** A refused peer certificate in words, with the flag to change. */
    private static String certificateRefused(CertificateRefusal refused) {
        return switch (refused) {
            case EXPIRED ->
                "the peer's TLS certificate (or one of its chain) has expired: renew the peer's --tls-cert-file";
            case NOT_YET_VALID ->
                "the peer's TLS certificate (or one of its chain) is not valid yet: check the peer's --tls-cert-file"
                        + " and both clocks";
            case OTHER_HOST ->
                "the peer's TLS certificate does not name the host of its URL (give the peer a certificate for that"
                        + " name, or use the name its certificate holds)";
            case UNTRUSTED_CA ->
                "the peer's TLS certificate is not signed by a CA this replica trusts (--tls-ca-file names the CA"
                        + " that issued the peers' certificates)";
        };
    }

    /** {@code http://peer:8090/} as {@code http://peer:8090}: the path then appended is {@code /dump}, not {@code //dump}. */
    private static String withoutTrailingSlash(String peer) {
        int end = peer.length();
        while (end > 0 && peer.charAt(end - 1) == '/') {
            end--;
        }
        return peer.substring(0, end);
    }

    private Recovered fetch(HttpClient client, String peer, boolean binary) throws IOException, InterruptedException {
        // a version 4 dump carries the registrations with the batch at each watermark and the blocks' last-store
        // times, version 5 the salts of salted blocks too (a peer with --mix-cache-salt), version 6 which watermarks
        // are a snapshot's not proven since; a replica that knows only version 5 ignores snapshot_watermarks (its
        // registrations are taken as current, as before), one that knows only version 4 cache_salts as well, one
        // that knows only version 3 watermark_batches too, one that knows only version 2 store_times too, older
        // replicas and Dynamo ignore every parameter
        HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create(withoutTrailingSlash(peer) + "/dump"
                        + (binary
                                ? "?registrations=true&store_times=true&watermark_batches=true&cache_salts=true"
                                        + "&snapshot_watermarks=true"
                                : "")))
                .timeout(timeout)
                .GET();
        if (binary) {
            builder.header("Accept", BinaryDump.MEDIA_TYPE + ", application/json;q=0.5");
        }
        if (authToken != null) {
            builder.header("Authorization", "Bearer " + authToken);
        }
        HttpRequest request = builder.build();
        HttpResponse<InputStream> response = client.send(request, HttpResponse.BodyHandlers.ofInputStream());
        try (InputStream body = new PeerBodyDeadline(response.body(), timeout, wholeBodyTimeouts)) {
            if (response.statusCode() / 100 != 2) {
                String said = new String(body.readNBytes(512), java.nio.charset.StandardCharsets.UTF_8).strip();
                String refusal = refusal(request.uri(), response.statusCode(), said, authToken != null);
                Duration retryAfter = PeerBusy.retryAfter(response);
                throw retryAfter == null
                        ? new IOException(refusal)
                        : new PeerBusy(refusal, retryAfter, said.contains(StartupGate.RECOVERING));
            }
            boolean blank = response.headers()
                    .firstValue(BinaryDump.BLANK_HEADER)
                    .map(v -> v.equalsIgnoreCase("true"))
                    .orElse(false);
            Recovered r = isBinary(response)
                    ? BinaryDumpApplier.stage(
                            body,
                            indexers,
                            timeout.toMillis(),
                            peer,
                            response.headers()
                                    .firstValue(BinaryDump.BLOCKS_HEADER)
                                    .orElse(""))
                    : DumpApplier.parse(body, indexers, peer, timeout.toMillis());
            return blank ? r.asBlank() : r;
        }
    }

    /**
     * A peer that has the state but serves as many dumps as it allows ({@code --max-concurrent-dumps}): 503 with
     * {@code Retry-After}; or one still recovering that has a snapshot to start from, which will have the state
     * whatever its peers answer ({@code recovering}). A peer recovering with nothing to fall back on answers 503
     * without a {@code Retry-After}, and is not asked again.
     */
    static final class PeerBusy extends IOException {
        final Duration retryAfter;
        final boolean recovering;

        PeerBusy(String message, Duration retryAfter, boolean recovering) {
            super(message);
            this.retryAfter = retryAfter;
            this.recovering = recovering;
        }

        /** The 503's Retry-After in whole seconds, 1 to {@link #MAX_RETRY_AFTER}; null for any other answer. */
        static Duration retryAfter(HttpResponse<?> response) {
            if (response.statusCode() != 503) {
                return null;
            }
            return response.headers()
                    .firstValue("Retry-After")
                    .filter(v -> v.strip().matches("[0-9]{1,6}"))
                    .map(v -> Duration.ofSeconds(Math.clamp(Long.parseLong(v.strip()), 1, MAX_RETRY_AFTER.toSeconds())))
                    .orElse(null);
        }
    }

    private static boolean isBinary(HttpResponse<?> response) {
        return response.headers()
                .firstValue("Content-Type")
                .map(t -> t.toLowerCase(java.util.Locale.ROOT).startsWith(BinaryDump.MEDIA_TYPE))
                .orElse(false);
    }
}

package io.kvindexer.indexer;

import io.helidon.common.tls.Tls;
import io.helidon.webserver.WebServer;
import io.kvindexer.indexer.common.TransportSecurity;
import io.kvindexer.indexer.common.WatchedFiles;
import io.kvindexer.indexer.http.ServerTls;
import io.kvindexer.tls.PemFormat;
import io.kvindexer.tls.Validity;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Picks up renewed certificates and rotated tokens without a restart: the server's TLS is swapped in place
 * (Helidon's {@link WebServer#reloadTls}: the next connection's handshake uses the new pair, open connections keep
 * theirs), and the token file's new content becomes current with the old one accepted for the grace period.
 */
final class SecurityReloads implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(SecurityReloads.class.getName());

    private final List<WatchedFiles> watches = new ArrayList<>();

    private final Object tlsLock = new Object();
    private List<X509Certificate> servedChain;

    /**
     * Starts watching; {@code served} is the TLS the server started with (null without TLS). The files were read
     * for it, and for the token, before the server started: a change made since, before the watches took their
     * first look, is applied here, or it would go unnoticed until the files changed again (a Secret rotated while
     * the replica started kept the old token, or certificate, for good).
     */
    SecurityReloads(TransportSecurity security, WebServer server, Tls served) {
        if (security.serverTls()) {
            servedChain = served == null ? List.of() : served.prototype().privateKeyCertChain();
            warnOutsideValidity(security.certFile());
            watches.add(WatchedFiles.start(
                    "tls",
                    List.of(security.certFile(), security.keyFile()),
                    security.reloadInterval(),
                    () -> reloadTls(security, server)));
            reloadTls(security, server);
        }
        if (security.tokens() != null) {
            watches.add(WatchedFiles.start(
                    "auth-token",
                    List.of(security.tokens().file()),
                    security.reloadInterval(),
                    security.tokens()::reload));
            security.tokens().reload();
        }
    }

    /** Serves the pair on disk if it is usable and not the one served; one reload at a time, in file order. */
    private boolean reloadTls(TransportSecurity security, WebServer server) {
        synchronized (tlsLock) {
            Tls tls;
            try {
                tls = ServerTls.load(security.certFile(), security.keyFile());
            } catch (IllegalArgumentException e) {
                LOG.log(
                        System.Logger.Level.WARNING,
                        "TLS files changed but are not usable yet ({0}); still serving the previous certificate",
                        e.getMessage());
                return false;
            }
            List<X509Certificate> chain = tls.prototype().privateKeyCertChain();
            if (chain.equals(servedChain)) {
                return true; // the same pair rewritten, or the check at start found nothing new
            }
            server.reloadTls(tls);
            servedChain = chain;
            LOG.log(System.Logger.Level.INFO, "TLS certificate reloaded from {0}", security.certFile());
            warnOutsideValidity(security.certFile());
            return true;
        }
    }

    /**
     * A certificate of the served chain that is expired or not yet valid is served all the same (the files are the
     * user's to renew), but every client refuses the handshake: the log says which file and which date, at start and
     * at each reload, instead of leaving clients to report a bare handshake failure.
     */
    static void warnOutsideValidity(Path certFile) {
        List<X509Certificate> chain;
        try (InputStream in = Files.newInputStream(certFile)) {
            chain = PemFormat.certificates(in);
        } catch (IOException | CertificateException e) {
            return; // ServerTls.load has just read it: a file that changed again since is checked at its own reload
        }
        Instant now = Instant.now();
        for (int i = 0; i < chain.size(); i++) {
            String problem = Validity.problem(chain.get(i), now);
            if (problem != null) {
                LOG.log(
                        System.Logger.Level.WARNING,
                        "the TLS certificate in {0} {1}{2}: clients refuse the handshake until it is renewed",
                        certFile,
                        i == 0
                                ? ""
                                : "(chain certificate " + (i + 1) + ", "
                                        + chain.get(i).getSubjectX500Principal() + ") ",
                        problem);
            }
        }
    }

    @Override
    public void close() {
        watches.forEach(WatchedFiles::close);
    }
}

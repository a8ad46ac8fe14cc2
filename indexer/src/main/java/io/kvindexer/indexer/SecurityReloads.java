package io.kvindexer.indexer;

import io.helidon.common.tls.Tls;
import io.helidon.webserver.WebServer;
import io.kvindexer.indexer.common.TransportSecurity;
import io.kvindexer.indexer.common.WatchedFiles;
import io.kvindexer.indexer.http.ServerTls;
import io.kvindexer.tls.PemFormat;
import io.kvindexer.tls.ServedChain;
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
            warnMissingIssuer(security.certFile(), security.caFile());
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
            warnMissingIssuer(security.certFile(), security.caFile());
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

    /**
     * A chain that stops short of a root (most often a leaf served without the intermediate CA that issued it) is
     * served all the same, but a client that trusts only the root cannot build a path and refuses the handshake: the
     * log says which certificate's issuer is missing, at start and at each reload. An issuer outside the file is
     * fine when it is a root: one in {@code caFile} ({@code --tls-ca-file}, the CA the replicas trust each other by)
     * or among the JDK's; one that is neither may still be a private root the clients have, which the warning says.
     */
    static void warnMissingIssuer(Path certFile, Path caFile) {
        List<X509Certificate> chain;
        List<X509Certificate> roots = new ArrayList<>(ServedChain.jdkRoots());
        try (InputStream in = Files.newInputStream(certFile)) {
            chain = PemFormat.certificates(in);
        } catch (IOException | CertificateException e) {
            return; // as in warnOutsideValidity
        }
        if (caFile != null) {
            try (InputStream in = Files.newInputStream(caFile)) {
                roots.addAll(PemFormat.certificates(in));
            } catch (IOException | CertificateException e) {
                // its own reload says what is wrong with it; the check goes on with the JDK's roots
            }
        }
        X509Certificate broken = ServedChain.missingIssuer(chain, roots);
        if (broken == null) {
            return;
        }
        int at = chain.indexOf(broken);
        LOG.log(
                System.Logger.Level.WARNING,
                "the TLS certificate in {0} {1}is issued by {2}, whose certificate is neither in the file nor a root"
                        + " this replica knows (--tls-ca-file, the JDK''s trusted roots): if {2} is an intermediate"
                        + " CA, append its certificate to {0} after this one, or clients that trust only the root"
                        + " refuse the handshake; if it is a root your clients trust, give it as --tls-ca-file",
                certFile,
                at == 0 ? "" : "(chain certificate " + (at + 1) + ", " + broken.getSubjectX500Principal() + ") ",
                broken.getIssuerX500Principal());
    }

    @Override
    public void close() {
        watches.forEach(WatchedFiles::close);
    }
}

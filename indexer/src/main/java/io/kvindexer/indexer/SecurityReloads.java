package io.kvindexer.indexer;

import io.helidon.common.tls.Tls;
import io.helidon.webserver.WebServer;
import io.kvindexer.indexer.common.TransportSecurity;
import io.kvindexer.indexer.common.WatchedFiles;
import io.kvindexer.indexer.http.ServerTls;
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

    SecurityReloads(TransportSecurity security, WebServer server) {
        if (security.serverTls()) {
            watches.add(WatchedFiles.start(
                    "tls", List.of(security.certFile(), security.keyFile()), security.reloadInterval(), () -> {
                        Tls tls;
                        try {
                            tls = ServerTls.load(security.certFile(), security.keyFile());
                        } catch (IllegalArgumentException e) {
                            LOG.log(
                                    System.Logger.Level.WARNING,
                                    "TLS files changed but are not usable yet ({0}); still serving the previous"
                                            + " certificate",
                                    e.getMessage());
                            return false;
                        }
                        server.reloadTls(tls);
                        LOG.log(System.Logger.Level.INFO, "TLS certificate reloaded from {0}", security.certFile());
                        return true;
                    }));
        }
        if (security.tokens() != null) {
            watches.add(WatchedFiles.start(
                    "auth-token",
                    List.of(security.tokens().file()),
                    security.reloadInterval(),
                    security.tokens()::reload));
        }
    }

    @Override
    public void close() {
        watches.forEach(WatchedFiles::close);
    }
}

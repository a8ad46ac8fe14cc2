package io.kvindexer.indexer;

import io.kvindexer.indexer.common.BearerTokens;
import io.kvindexer.indexer.common.Durations;
import io.kvindexer.indexer.common.TransportSecurity;
import io.kvindexer.indexer.http.ServerTls;
import io.kvindexer.indexer.recovery.PeerHttpClients;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import picocli.CommandLine.Option;

/** The TLS flags and the token rotation flags, mixed into {@link IndexerCli}. */
public final class TlsOptions {

    @Option(
            names = "--tls-cert-file",
            paramLabel = "FILE",
            description = "PEM certificate chain: serve HTTPS on --port (with --tls-key-file); re-read when it"
                    + " changes. Default: plain HTTP")
    Path certFile;

    @Option(
            names = "--tls-key-file",
            paramLabel = "FILE",
            description = "PEM private key of --tls-cert-file (unencrypted PKCS#8, or PKCS#1 RSA); re-read when it"
                    + " changes")
    Path keyFile;

    @Option(
            names = "--tls-ca-file",
            paramLabel = "FILE",
            description = "PEM CA certificates trusted when recovering from https:// peers (default: the JDK's"
                    + " trust store)")
    Path caFile;

    @Option(
            names = "--auth-token-grace",
            paramLabel = "DURATION",
            description = "after --auth-token-file changes, the previous token is still accepted this long"
                    + " (default: 5m; only with --auth-token-file)")
    String tokenGrace;

    @Option(
            names = "--reload-interval",
            paramLabel = "DURATION",
            description = "how often --tls-cert-file, --tls-key-file and --auth-token-file are checked for changes"
                    + " (default: 10s)")
    String reloadInterval = Durations.format(TransportSecurity.DEFAULT_RELOAD_INTERVAL);

    TransportSecurity security(Path authTokenFile) throws ConfigException {
        if ((certFile == null) != (keyFile == null)) {
            throw new ConfigException("--tls-cert-file and --tls-key-file must be given together");
        }
        if (tokenGrace != null && authTokenFile == null) {
            // a token from the environment never changes: the grace would silently do nothing
            throw new ConfigException("--auth-token-file is required when --auth-token-grace is specified (only a"
                    + " token file rotates)");
        }
        Duration grace = tokenGrace == null
                ? TransportSecurity.DEFAULT_TOKEN_GRACE
                : DurationFlags.parse("--auth-token-grace", tokenGrace);
        Duration interval = DurationFlags.parse("--reload-interval", reloadInterval);
        if (interval.isZero()) {
            throw new ConfigException("invalid value for --reload-interval: must be > 0");
        }
        if (certFile != null) {
            try {
                ServerTls.load(certFile, keyFile); // a bad pair is a startup error, not a server without TLS
            } catch (IllegalArgumentException e) {
                throw new ConfigException("invalid value for --tls-cert-file/--tls-key-file: " + e.getMessage());
            }
        }
        if (caFile != null) {
            try {
                PeerHttpClients.sslContext(caFile);
            } catch (IllegalArgumentException e) {
                throw new ConfigException("invalid value for --tls-ca-file: " + e.getMessage());
            }
        }
        BearerTokens tokens = null;
        if (authTokenFile != null) {
            try {
                tokens = BearerTokens.fromFile(authTokenFile, grace);
            } catch (IOException e) {
                throw new ConfigException("invalid value for --auth-token-file: " + e.getMessage());
            }
        }
        return new TransportSecurity(certFile, keyFile, caFile, tokens, interval);
    }
}

package io.kvindexer.indexer.common;

import java.nio.file.Path;
import java.time.Duration;

/**
 * The TLS files and the rotating bearer token of one indexer.
 *
 * @param certFile       PEM certificate chain served on the HTTP port; null = plain HTTP
 * @param keyFile        PEM (PKCS#8) private key of {@code certFile}; null exactly when {@code certFile} is
 * @param caFile         PEM CA certificates trusted when recovering from {@code https://} peers; null = the JDK's
 * @param tokens         accepted bearer tokens when they come from {@code --auth-token-file}; null otherwise
 * @param reloadInterval how often the certificate, key and token files are checked for changes
 */
public record TransportSecurity(
        Path certFile, Path keyFile, Path caFile, BearerTokens tokens, Duration reloadInterval) {

    public static final Duration DEFAULT_RELOAD_INTERVAL = Duration.ofSeconds(10);
    public static final Duration DEFAULT_TOKEN_GRACE = Duration.ofMinutes(5);
    public static final TransportSecurity NONE = new TransportSecurity(null, null, null, null, DEFAULT_RELOAD_INTERVAL);

    public TransportSecurity {
        if ((certFile == null) != (keyFile == null)) {
            throw new IllegalArgumentException("--tls-cert-file and --tls-key-file go together");
        }
        if (reloadInterval == null || reloadInterval.isZero() || reloadInterval.isNegative()) {
            throw new IllegalArgumentException("the reload interval must be > 0");
        }
    }

    /** True when the HTTP port serves HTTPS. */
    public boolean serverTls() {
        return certFile != null;
    }
}

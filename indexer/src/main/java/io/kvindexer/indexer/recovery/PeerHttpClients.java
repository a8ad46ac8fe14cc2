package io.kvindexer.indexer.recovery;

import io.kvindexer.indexer.common.IoErrors;
import io.kvindexer.tls.CaTrust;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.List;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;

/**
 * The HTTP client a replica fetches its peers' {@code /dump} with. Without a CA file it trusts what the JDK trusts.
 * With {@code --tls-ca-file} it trusts exactly the certificates that file's CAs issued ({@link CaTrust}: a peer
 * URL's host name is checked as usual, a peer reached by IP address, as {@code --peers-dns} builds them, on the
 * chain alone).
 */
public final class PeerHttpClients {

    private PeerHttpClients() {}

    /**
     * A client for {@code peers} with {@code connectTimeout} trusting {@code caFile}'s certificates (null: the JDK's
     * trust store). When no peer is {@code https://}, the client never speaks TLS, and it gets a context that trusts
     * nothing instead of the JDK's default one, which a client builds even for {@code http://} and which parses the
     * whole trust store: CPU and JIT work a restarted replica would spend beside its recovery warm-up.
     */
    public static HttpClient create(Duration connectTimeout, Path caFile, List<String> peers) {
        HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(connectTimeout);
        if (caFile != null) {
            builder.sslContext(sslContext(caFile));
        } else if (peers.stream().noneMatch(p -> p.regionMatches(true, 0, "https:", 0, 6))) {
            builder.sslContext(trustingNothing());
        }
        return builder.build();
    }

    private static SSLContext trustingNothing() {
        try {
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(new KeyManager[0], new TrustManager[0], null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("no TLS context: " + e.getMessage(), e);
        }
    }

    /** TLS that trusts only the CAs in {@code caFile}. */
    public static SSLContext sslContext(Path caFile) {
        try (InputStream in = Files.newInputStream(caFile)) {
            return CaTrust.sslContext(in);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read " + caFile + ": " + IoErrors.describe(e, caFile), e);
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot use " + caFile + ": " + e.getMessage(), e);
        }
    }
}

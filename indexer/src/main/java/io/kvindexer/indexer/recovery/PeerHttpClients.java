package io.kvindexer.indexer.recovery;

import io.kvindexer.tls.CaTrust;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;
import javax.net.ssl.SSLContext;

/**
 * The HTTP client a replica fetches its peers' {@code /dump} with. Without a CA file it trusts what the JDK trusts.
 * With {@code --tls-ca-file} it trusts exactly the certificates that file's CAs issued ({@link CaTrust}: a peer
 * URL's host name is checked as usual, a peer reached by IP address, as {@code --peers-dns} builds them, on the
 * chain alone).
 */
public final class PeerHttpClients {

    private PeerHttpClients() {}

    /** A client with {@code connectTimeout} trusting {@code caFile}'s certificates (null: the JDK's trust store). */
    public static HttpClient create(Duration connectTimeout, Path caFile) {
        HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(connectTimeout);
        if (caFile != null) {
            builder.sslContext(sslContext(caFile));
        }
        return builder.build();
    }

    /** TLS that trusts only the CAs in {@code caFile}. */
    public static SSLContext sslContext(Path caFile) {
        try (InputStream in = Files.newInputStream(caFile)) {
            return CaTrust.sslContext(in);
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalArgumentException("cannot use --tls-ca-file " + caFile + ": " + e.getMessage(), e);
        }
    }
}

package io.kvindexer.indexer.recovery;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Collection;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * The HTTP client a replica fetches its peers' {@code /dump} with. Without a CA file it trusts what the JDK trusts.
 * With {@code --tls-ca-file} it trusts exactly the certificates that file's CAs issued, and checks the peer's name
 * as usual when the peer URL names a host; a peer reached by IP address ({@code --peers-dns} builds its URLs from
 * the resolved addresses, and a pod's address is not known when its certificate is issued) is accepted on the
 * chain alone. That is why the CA file should hold a CA that issues only the indexers' certificates (the operator's
 * own CA does; with cert-manager, give the indexers an issuer of their own).
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
        try {
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            int i = 0;
            for (Certificate c : readCertificates(caFile)) {
                store.setCertificateEntry("ca-" + i++, c);
            }
            if (i == 0) {
                throw new IllegalArgumentException("no certificate in " + caFile);
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(store);
            X509ExtendedTrustManager chain = null;
            for (TrustManager tm : tmf.getTrustManagers()) {
                if (tm instanceof X509ExtendedTrustManager x) {
                    chain = x;
                }
            }
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, new TrustManager[] {new IpPeersByChain(chain)}, null);
            return ctx;
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalArgumentException("cannot use --tls-ca-file " + caFile + ": " + e.getMessage(), e);
        }
    }

    private static Collection<? extends Certificate> readCertificates(Path caFile)
            throws IOException, CertificateException {
        try (InputStream in = Files.newInputStream(caFile)) {
            return CertificateFactory.getInstance("X.509").generateCertificates(in);
        }
    }

    /** Name check for host names, chain-only for IP literals (see the class comment). */
    private static final class IpPeersByChain extends X509ExtendedTrustManager {
        private final X509ExtendedTrustManager delegate;

        IpPeersByChain(X509ExtendedTrustManager delegate) {
            this.delegate = delegate;
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            if (engine != null && isIpLiteral(engine.getPeerHost())) {
                delegate.checkServerTrusted(chain, authType);
            } else {
                delegate.checkServerTrusted(chain, authType, engine);
            }
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            delegate.checkServerTrusted(chain, authType, socket);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            delegate.checkServerTrusted(chain, authType);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            delegate.checkClientTrusted(chain, authType, engine);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            delegate.checkClientTrusted(chain, authType, socket);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            delegate.checkClientTrusted(chain, authType);
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return delegate.getAcceptedIssuers();
        }

        private static boolean isIpLiteral(String host) {
            if (host == null) {
                return false;
            }
            String h = host.startsWith("[") ? host.substring(1, host.length() - 1) : host;
            return h.contains(":") || h.matches("\\d{1,3}(\\.\\d{1,3}){3}");
        }
    }
}

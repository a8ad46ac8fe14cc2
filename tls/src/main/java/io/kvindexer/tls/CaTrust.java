package io.kvindexer.tls;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * Client TLS that trusts exactly the CAs of a PEM file, for calls to indexer replicas. A peer reached by a host
 * name is checked as usual; a peer reached by IP address is accepted on the certificate chain alone, because a
 * pod's address is not known when its certificate is issued (the indexer's {@code --peers-dns} builds its peer
 * URLs from resolved addresses, and the operator calls replicas by pod IP). So the CA should issue only the
 * indexers' certificates: the operator's own CA does; with cert-manager, give the indexers an issuer of their own.
 */
public final class CaTrust {

    private CaTrust() {}

    /** A client context trusting only the certificates in {@code pem}; fails when it holds none. */
    public static SSLContext sslContext(InputStream pem) throws GeneralSecurityException, IOException {
        KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
        store.load(null, null);
        List<X509Certificate> cas = PemFormat.certificates(pem);
        if (cas.isEmpty()) {
            throw new GeneralSecurityException("no certificate in the PEM text");
        }
        for (int i = 0; i < cas.size(); i++) {
            store.setCertificateEntry("ca-" + i, cas.get(i));
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
    }

    /** True for an IPv4 or IPv6 literal (bracketed or not), false for a host name. */
    static boolean isIpLiteral(String host) {
        if (host == null) {
            return false;
        }
        String h = host.startsWith("[") ? host.substring(1, host.length() - 1) : host;
        return h.contains(":") || h.matches("\\d{1,3}(\\.\\d{1,3}){3}");
    }

    /**
     * Name check for host names, chain only for IP literals. A client context never checks a client, so those
     * three checks refuse: they would only run if this context were wrongly used on a server.
     */
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
            throw clientsNotChecked();
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            throw clientsNotChecked();
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            throw clientsNotChecked();
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return delegate.getAcceptedIssuers();
        }

        private static CertificateException clientsNotChecked() {
            return new CertificateException("a client-only trust manager does not check clients");
        }
    }
}

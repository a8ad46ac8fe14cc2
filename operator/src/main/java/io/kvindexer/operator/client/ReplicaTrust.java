package io.kvindexer.operator.client;

import java.io.ByteArrayInputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * TLS that trusts exactly a KvIndexer's CA. The operator calls replicas by pod IP (known only once a pod is
 * scheduled, so never in its certificate): an IP-literal peer is accepted on the certificate chain alone, a host
 * name is checked as usual. The CA is the operator's own per-namespace CA, or the cert-manager issuer named for
 * the KvIndexer (give the indexers an issuer of their own: any certificate it signs passes for a replica).
 */
final class ReplicaTrust {

    private ReplicaTrust() {}

    static SSLContext sslContext(String caPem) {
        try {
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            int i = 0;
            for (Certificate c : CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(caPem.getBytes(StandardCharsets.US_ASCII)))) {
                store.setCertificateEntry("ca-" + i++, c);
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
            ctx.init(null, new TrustManager[] {new IpByChain(chain)}, null);
            return ctx;
        } catch (GeneralSecurityException | java.io.IOException e) {
            throw new IllegalArgumentException("unusable CA certificate: " + e.getMessage(), e);
        }
    }

    private static final class IpByChain extends X509ExtendedTrustManager {
        private final X509ExtendedTrustManager delegate;

        IpByChain(X509ExtendedTrustManager delegate) {
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

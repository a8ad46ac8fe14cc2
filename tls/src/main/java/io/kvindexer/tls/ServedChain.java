package io.kvindexer.tls;

import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

/**
 * Whether a certificate chain a server sends lets a client that knows only the root build a path to it. A server
 * certificate issued by an intermediate CA must be sent with that intermediate's certificate (RFC 8446 section
 * 4.4.2): a client that trusts the root only has no other way to it (the JDK, curl and Go do not fetch it), so a file
 * that holds the leaf alone works for browsers that cached the intermediate and fails everywhere else.
 */
public final class ServedChain {

    private ServedChain() {}

    /**
     * The first certificate of {@code chain} (the leaf first, as served) whose issuer is neither itself, nor
     * another certificate of the chain, nor one of the self-signed {@code roots}: the one after which the path
     * breaks off; null when the path reaches a self-signed certificate or a known root. An issuer not in the chain
     * may be a root the clients trust that this process does not know: only the caller can say so.
     */
    public static X509Certificate missingIssuer(List<X509Certificate> chain, Collection<X509Certificate> roots) {
        if (chain.isEmpty()) {
            return null;
        }
        X509Certificate current = chain.getFirst();
        for (int steps = 0; steps <= chain.size(); steps++) { // a chain that loops stops here
            if (issues(current, current)) {
                return null;
            }
            X509Certificate issuer = issuerOf(current, chain);
            if (issuer == null) {
                X509Certificate root = issuerOf(current, roots);
                return root != null && issues(root, root) ? null : current;
            }
            current = issuer;
        }
        return null;
    }

    /** The JDK's trusted roots (its {@code cacerts}, or what {@code javax.net.ssl.trustStore} names). */
    public static List<X509Certificate> jdkRoots() {
        try {
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init((KeyStore) null);
            List<X509Certificate> roots = new ArrayList<>();
            for (TrustManager tm : tmf.getTrustManagers()) {
                if (tm instanceof X509TrustManager x) {
                    roots.addAll(List.of(x.getAcceptedIssuers()));
                }
            }
            return roots;
        } catch (GeneralSecurityException e) {
            return List.of(); // no default store: nothing is known to be a root
        }
    }

    private static X509Certificate issuerOf(X509Certificate cert, Collection<X509Certificate> candidates) {
        for (X509Certificate c : candidates) {
            if (c != cert && issues(c, cert)) {
                return c;
            }
        }
        return null;
    }

    /** Whether {@code issuer} signed {@code cert}: its name is the issuer's, and its key verifies the signature. */
    private static boolean issues(X509Certificate issuer, X509Certificate cert) {
        if (!issuer.getSubjectX500Principal().equals(cert.getIssuerX500Principal())) {
            return false;
        }
        try {
            cert.verify(issuer.getPublicKey());
            return true;
        } catch (GeneralSecurityException | RuntimeException e) {
            return false;
        }
    }
}

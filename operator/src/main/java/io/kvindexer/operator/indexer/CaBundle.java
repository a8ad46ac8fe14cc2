package io.kvindexer.operator.indexer;

import io.kvindexer.tls.PemFormat;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code ca.crt} the operator writes into a {@code <name>-tls} Secret it issues: the namespace's CA first, then
 * each former one a replica may still serve a certificate of. When {@code kv-indexer-ca} is renewed or replaced, the
 * replicas pick up their new certificate one by one (the kubelet's copy of the Secret, then their reload), and their
 * peers (recovering with {@code --tls-ca-file}) and Prometheus read {@code ca.crt} meanwhile: with the new CA alone,
 * the replicas not switched yet would be refused. The bundle lives in the Secret itself, so an operator restarted
 * during the change still knows the former CA ({@link SecuritySecrets} drops it once every replica serves a
 * certificate of the new one, {@link ServedCertificates}).
 */
final class CaBundle {
    private CaBundle() {}

    /** The certificates of {@code caCrt} in order; none when it is missing or unreadable. */
    static List<X509Certificate> read(String caCrt) {
        if (caCrt == null) {
            return List.of();
        }
        try {
            return PemFormat.certificates(caCrt);
        } catch (GeneralSecurityException | RuntimeException e) {
            return List.of();
        }
    }

    /**
     * The former CAs to keep from {@code caCrt} (the Secret's content before): every certificate but {@code ca}'s,
     * still valid at {@code now} (an expired CA vouches for nothing), in order.
     */
    static List<X509Certificate> formers(String caCrt, OperatorCa ca, Instant now) {
        List<X509Certificate> kept = new ArrayList<>();
        for (X509Certificate c : read(caCrt)) {
            if (!c.equals(ca.certificate()) && now.isBefore(c.getNotAfter().toInstant()) && !kept.contains(c)) {
                kept.add(c);
            }
        }
        return List.copyOf(kept);
    }

    /** The PEM text of {@code ca}, then {@code formers}. */
    static String pem(OperatorCa ca, List<X509Certificate> formers) {
        StringBuilder pem = new StringBuilder(ca.certPem());
        formers.forEach(c -> pem.append(PemFormat.certificate(c)));
        return pem.toString();
    }
}

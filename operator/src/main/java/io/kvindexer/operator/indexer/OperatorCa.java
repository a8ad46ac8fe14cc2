package io.kvindexer.operator.indexer;

import io.kvindexer.tls.Certificates;
import io.kvindexer.tls.PemFormat;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.CertIOException;
import org.bouncycastle.cert.X509v3CertificateBuilder;

/**
 * The operator's own small CA, used when no cert-manager issuer is named: an EC P-256 key and a self-signed CA
 * certificate (10 years), kept in a Secret per namespace, that issues each KvIndexer a serving certificate (90
 * days) for its Services' names. A certificate is renewed when less than a third of its life is left, as
 * cert-manager does by default. Keys are PKCS#8 PEM, which the indexer (Helidon) reads.
 */
public final class OperatorCa {
    public static final Duration CA_LIFETIME = Duration.ofDays(3650);
    public static final Duration CERT_LIFETIME = Duration.ofDays(90);

    /** A certificate and its private key, as PEM text. */
    public record Pem(String cert, String key) {}

    private final X509Certificate cert;
    private final PrivateKey key;
    private final String certPem;

    private OperatorCa(X509Certificate cert, PrivateKey key) {
        this.cert = cert;
        this.key = key;
        this.certPem = PemFormat.certificate(cert);
    }

    /** A new CA named after the namespace it serves. */
    public static OperatorCa create(String namespace, Instant now) {
        try {
            KeyPair keys = Certificates.ecKeys();
            X500Name name = new X500Name("CN=kv-indexer CA (" + namespace + "),O=kv-indexer-operator");
            return new OperatorCa(Certificates.selfSignedCa(name, keys, now, CA_LIFETIME), keys.getPrivate());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot create the operator CA", e);
        }
    }

    /** The CA stored as PEM (as {@link #pem()} wrote it). */
    public static OperatorCa load(Pem pem) throws GeneralSecurityException {
        X509Certificate cert = PemFormat.certificates(pem.cert()).getFirst();
        byte[] der = PemFormat.decode(pem.key(), PemFormat.PRIVATE_KEY);
        PrivateKey key = KeyFactory.getInstance(cert.getPublicKey().getAlgorithm())
                .generatePrivate(new PKCS8EncodedKeySpec(der));
        return new OperatorCa(cert, key);
    }

    public Pem pem() {
        return new Pem(certPem, PemFormat.encode(PemFormat.PRIVATE_KEY, key.getEncoded()));
    }

    public String certPem() {
        return certPem;
    }

    public X509Certificate certificate() {
        return cert;
    }

    /** True when this CA itself is within a third of its life from expiring (then a new one is made). */
    public boolean expiring(Instant now) {
        return dueForRenewal(cert, now);
    }

    /** A serving certificate for {@code dnsNames}, valid from a minute ago for {@link #CERT_LIFETIME}. */
    public Pem issue(String commonName, List<String> dnsNames, Instant now) {
        try {
            KeyPair keys = Certificates.ecKeys();
            X509v3CertificateBuilder b = Certificates.builder(
                    new X500Name("CN=" + commonName),
                    Certificates.subjectOf(cert),
                    keys.getPublic(),
                    now,
                    CERT_LIFETIME);
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            b.addExtension(
                    Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment));
            b.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth));
            b.addExtension(
                    Extension.subjectAlternativeName,
                    false,
                    new GeneralNames(dnsNames.stream()
                            .map(n -> new GeneralName(GeneralName.dNSName, n))
                            .toArray(GeneralName[]::new)));
            X509Certificate leaf = Certificates.sign(b, key);
            return new Pem(
                    PemFormat.certificate(leaf),
                    PemFormat.encode(PemFormat.PRIVATE_KEY, keys.getPrivate().getEncoded()));
        } catch (GeneralSecurityException | CertIOException e) {
            throw new IllegalStateException("cannot issue a certificate for " + commonName, e);
        }
    }

    /** True when less than a third of the certificate's validity is left. */
    public static boolean dueForRenewal(X509Certificate c, Instant now) {
        Instant from = c.getNotBefore().toInstant();
        Instant to = c.getNotAfter().toInstant();
        Duration third = Duration.between(from, to).dividedBy(3);
        return !now.isBefore(to.minus(third));
    }
}

package io.kvindexer.operator.indexer;

import java.io.ByteArrayInputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
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
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * The operator's own small CA, used when no cert-manager issuer is named: an EC P-256 key and a self-signed CA
 * certificate (10 years), kept in a Secret per namespace, that issues each KvIndexer a serving certificate (90
 * days) for its Services' names. A certificate is renewed when less than a third of its life is left, as
 * cert-manager does by default. Keys are PKCS#8 PEM, which the indexer (Helidon) reads.
 */
public final class OperatorCa {
    public static final Duration CA_LIFETIME = Duration.ofDays(3650);
    public static final Duration CERT_LIFETIME = Duration.ofDays(90);

    private static final SecureRandom RANDOM = new SecureRandom();

    /** A certificate and its private key, as PEM text. */
    public record Pem(String cert, String key) {}

    private final X509Certificate cert;
    private final PrivateKey key;
    private final String certPem;

    private OperatorCa(X509Certificate cert, PrivateKey key) {
        this.cert = cert;
        this.key = key;
        this.certPem = pem("CERTIFICATE", encoded(cert));
    }

    /** A new CA named after the namespace it serves. */
    public static OperatorCa create(String namespace, Instant now) {
        try {
            KeyPair keys = ecKeys();
            X500Name name = new X500Name("CN=kv-indexer CA (" + namespace + "),O=kv-indexer-operator");
            X509v3CertificateBuilder b = builder(name, name, keys, now, CA_LIFETIME);
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
            return new OperatorCa(sign(b, keys.getPrivate()), keys.getPrivate());
        } catch (GeneralSecurityException | CertIOException e) {
            throw new IllegalStateException("cannot create the operator CA", e);
        }
    }

    /** The CA stored as PEM (as {@link #pem()} wrote it). */
    public static OperatorCa load(Pem pem) throws GeneralSecurityException {
        X509Certificate cert = parseCertificates(pem.cert()).getFirst();
        byte[] der = decode(pem.key(), "PRIVATE KEY");
        PrivateKey key = KeyFactory.getInstance(cert.getPublicKey().getAlgorithm())
                .generatePrivate(new PKCS8EncodedKeySpec(der));
        return new OperatorCa(cert, key);
    }

    public Pem pem() {
        return new Pem(certPem, pem("PRIVATE KEY", key.getEncoded()));
    }

    public String certPem() {
        return certPem;
    }

    /** True when this CA itself is within a third of its life from expiring (then a new one is made). */
    public boolean expiring(Instant now) {
        return dueForRenewal(cert, now);
    }

    /** A serving certificate for {@code dnsNames}, valid from a minute ago for {@link #CERT_LIFETIME}. */
    public Pem issue(String commonName, List<String> dnsNames, Instant now) {
        try {
            KeyPair keys = ecKeys();
            X509v3CertificateBuilder b = builder(
                    new X500Name("CN=" + commonName),
                    X500Name.getInstance(cert.getSubjectX500Principal().getEncoded()),
                    keys,
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
            X509Certificate leaf = sign(b, key);
            return new Pem(
                    pem("CERTIFICATE", encoded(leaf)),
                    pem("PRIVATE KEY", keys.getPrivate().getEncoded()));
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

    public static List<X509Certificate> parseCertificates(String pem) throws GeneralSecurityException {
        return CertificateFactory.getInstance("X.509")
                .generateCertificates(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)))
                .stream()
                .map(X509Certificate.class::cast)
                .toList();
    }

    private static KeyPair ecKeys() throws GeneralSecurityException {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
        return g.generateKeyPair();
    }

    private static X509v3CertificateBuilder builder(
            X500Name subject, X500Name issuer, KeyPair subjectKeys, Instant now, Duration lifetime) {
        return new JcaX509v3CertificateBuilder(
                issuer,
                new BigInteger(127, RANDOM).add(BigInteger.ONE),
                Date.from(now.minusSeconds(60)),
                Date.from(now.plus(lifetime)),
                subject,
                subjectKeys.getPublic());
    }

    private static X509Certificate sign(X509v3CertificateBuilder b, PrivateKey issuerKey)
            throws GeneralSecurityException {
        try {
            return new JcaX509CertificateConverter()
                    .getCertificate(b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKey)));
        } catch (OperatorCreationException e) {
            throw new GeneralSecurityException(e);
        }
    }

    private static byte[] encoded(X509Certificate c) {
        try {
            return c.getEncoded();
        } catch (java.security.cert.CertificateEncodingException e) {
            throw new IllegalStateException(e);
        }
    }

    static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n"
                + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }

    private static byte[] decode(String pem, String type) throws GeneralSecurityException {
        String begin = "-----BEGIN " + type + "-----";
        String end = "-----END " + type + "-----";
        int b = pem.indexOf(begin);
        int e = pem.indexOf(end);
        if (b < 0 || e < b) {
            throw new GeneralSecurityException("no " + type + " in PEM text");
        }
        try {
            return Base64.getMimeDecoder().decode(pem.substring(b + begin.length(), e));
        } catch (IllegalArgumentException x) {
            throw new GeneralSecurityException("bad base64 in " + type, x);
        }
    }
}

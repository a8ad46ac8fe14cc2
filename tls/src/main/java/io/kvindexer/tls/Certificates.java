package io.kvindexer.tls;

import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.CertIOException;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Issuing X.509 certificates with EC P-256 keys (the JDK has no public API for it; BouncyCastle's bcpkix is the
 * standard one, and whoever issues brings it: the operator's CA and the tests' throwaway CAs).
 */
public final class Certificates {
    private static final SecureRandom RANDOM = new SecureRandom();

    private Certificates() {}

    /** A new EC P-256 key pair. */
    public static KeyPair ecKeys() throws GeneralSecurityException {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
        return g.generateKeyPair();
    }

    /** A self-signed CA certificate that may sign leaves only (path length 0). */
    public static X509Certificate selfSignedCa(X500Name name, KeyPair keys, Instant now, Duration lifetime)
            throws GeneralSecurityException {
        X509v3CertificateBuilder b = builder(name, name, keys.getPublic(), now, lifetime);
        try {
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
        } catch (CertIOException e) {
            throw new GeneralSecurityException(e);
        }
        return sign(b, keys.getPrivate());
    }

    /** A certificate of {@code subject} by {@code issuer}, valid from a minute before {@code now}, random serial. */
    public static X509v3CertificateBuilder builder(
            X500Name subject, X500Name issuer, PublicKey subjectKey, Instant now, Duration lifetime) {
        return new JcaX509v3CertificateBuilder(
                issuer,
                new BigInteger(127, RANDOM).add(BigInteger.ONE),
                Date.from(now.minusSeconds(60)),
                Date.from(now.plus(lifetime)),
                subject,
                subjectKey);
    }

    /** The name of {@code ca} as an issuer for {@link #builder}. */
    public static X500Name subjectOf(X509Certificate ca) {
        return X500Name.getInstance(ca.getSubjectX500Principal().getEncoded());
    }

    /** Signs with SHA-256 and ECDSA. */
    public static X509Certificate sign(X509v3CertificateBuilder b, PrivateKey issuerKey)
            throws GeneralSecurityException {
        try {
            return new JcaX509CertificateConverter()
                    .getCertificate(b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKey)));
        } catch (OperatorCreationException e) {
            throw new GeneralSecurityException(e);
        }
    }
}

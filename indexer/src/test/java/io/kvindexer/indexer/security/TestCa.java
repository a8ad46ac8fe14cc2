package io.kvindexer.indexer.security;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/** A throwaway CA for the TLS tests: EC P-256 keys, PEM files written where the test asks. */
public final class TestCa {

    private static final AtomicLong SERIALS = new AtomicLong(System.nanoTime() & 0xFFFFFFFFL);

    /** A certificate and its key. */
    public record Issued(X509Certificate cert, KeyPair keys) {
        /** Writes the certificate (PEM) and the PKCS#8 key (PEM) to the two files, replacing them. */
        public void write(Path certFile, Path keyFile) throws IOException {
            writeAtomically(certFile, pem("CERTIFICATE", encoded(cert)));
            writeAtomically(keyFile, pem("PRIVATE KEY", keys.getPrivate().getEncoded()));
        }
    }

    private final KeyPair keys;
    private final X509Certificate cert;

    private TestCa(KeyPair keys, X509Certificate cert) {
        this.keys = keys;
        this.cert = cert;
    }

    public static TestCa create(String name) throws GeneralSecurityException {
        KeyPair keys = ecKeys();
        X500Name subject = new X500Name("CN=" + name);
        X509v3CertificateBuilder b = builder(subject, subject, keys, Duration.ofDays(1));
        try {
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
        } catch (IOException e) {
            throw new GeneralSecurityException(e);
        }
        return new TestCa(keys, sign(b, keys));
    }

    public X509Certificate cert() {
        return cert;
    }

    /** Writes the CA certificate as PEM. */
    public Path writeCert(Path file) throws IOException {
        writeAtomically(file, pem("CERTIFICATE", encoded(cert)));
        return file;
    }

    /** A serving certificate for 127.0.0.1 and localhost (plus {@code dnsNames}). */
    public Issued issue(String cn, String... dnsNames) throws GeneralSecurityException {
        KeyPair leaf = ecKeys();
        X509v3CertificateBuilder b = builder(
                new X500Name("CN=" + cn),
                X500Name.getInstance(cert.getSubjectX500Principal().getEncoded()),
                leaf,
                Duration.ofHours(1));
        List<GeneralName> sans = new ArrayList<>();
        sans.add(new GeneralName(GeneralName.iPAddress, "127.0.0.1"));
        sans.add(new GeneralName(GeneralName.dNSName, "localhost"));
        for (String d : dnsNames) {
            sans.add(new GeneralName(GeneralName.dNSName, d));
        }
        try {
            b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(sans.toArray(GeneralName[]::new)));
        } catch (IOException e) {
            throw new GeneralSecurityException(e);
        }
        return new Issued(sign(b, keys), leaf);
    }

    /** A client TLS context that trusts this CA only. */
    public SSLContext clientContext() throws GeneralSecurityException, IOException {
        java.security.KeyStore store = java.security.KeyStore.getInstance(java.security.KeyStore.getDefaultType());
        store.load(null, null);
        store.setCertificateEntry("ca", cert);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(store);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        return ctx;
    }

    private static KeyPair ecKeys() throws GeneralSecurityException {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"));
        return g.generateKeyPair();
    }

    private static X509v3CertificateBuilder builder(
            X500Name subject, X500Name issuer, KeyPair subjectKeys, Duration validity) {
        Instant now = Instant.now();
        return new JcaX509v3CertificateBuilder(
                issuer,
                BigInteger.valueOf(SERIALS.incrementAndGet()),
                Date.from(now.minusSeconds(60)),
                Date.from(now.plus(validity)),
                subject,
                subjectKeys.getPublic());
    }

    private static X509Certificate sign(X509v3CertificateBuilder b, KeyPair issuerKeys)
            throws GeneralSecurityException {
        try {
            return new JcaX509CertificateConverter()
                    .getCertificate(
                            b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKeys.getPrivate())));
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

    /** Write then rename, as the kubelet swaps a Secret volume: a reader never sees half a file. */
    static void writeAtomically(Path file, String content) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(tmp, content, StandardCharsets.UTF_8);
        Files.move(
                tmp,
                file,
                java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }
}

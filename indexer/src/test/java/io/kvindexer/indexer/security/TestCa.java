package io.kvindexer.indexer.security;

import io.kvindexer.tls.Certificates;
import io.kvindexer.tls.PemFormat;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.X509v3CertificateBuilder;

/** A throwaway CA for the TLS tests: EC P-256 keys, PEM files written where the test asks. */
public final class TestCa {

    /** A certificate and its key. */
    public record Issued(X509Certificate cert, KeyPair keys) {
        /** Writes the certificate (PEM) and the PKCS#8 key (PEM) to the two files, replacing them. */
        public void write(Path certFile, Path keyFile) throws IOException {
            writeAtomically(certFile, PemFormat.certificate(cert));
            writeAtomically(
                    keyFile,
                    PemFormat.encode(PemFormat.PRIVATE_KEY, keys.getPrivate().getEncoded()));
        }
    }

    private final KeyPair keys;
    private final X509Certificate cert;

    private TestCa(KeyPair keys, X509Certificate cert) {
        this.keys = keys;
        this.cert = cert;
    }

    public static TestCa create(String name) throws GeneralSecurityException {
        KeyPair keys = Certificates.ecKeys();
        return new TestCa(
                keys, Certificates.selfSignedCa(new X500Name("CN=" + name), keys, Instant.now(), Duration.ofDays(1)));
    }

    public X509Certificate cert() {
        return cert;
    }

    /** Writes the CA certificate as PEM. */
    public Path writeCert(Path file) throws IOException {
        writeAtomically(file, PemFormat.certificate(cert));
        return file;
    }

    /** A serving certificate for 127.0.0.1 and localhost (plus {@code dnsNames}), valid from now for an hour. */
    public Issued issue(String cn, String... dnsNames) throws GeneralSecurityException {
        return issue(cn, Instant.now(), Duration.ofHours(1), dnsNames);
    }

    /**
     * A serving certificate for 127.0.0.1 and localhost (plus {@code dnsNames}), valid from a minute before
     * {@code from} for {@code lifetime}: in the past for an expired one, in the future for one not valid yet.
     */
    public Issued issue(String cn, Instant from, Duration lifetime, String... dnsNames)
            throws GeneralSecurityException {
        KeyPair leaf = Certificates.ecKeys();
        X509v3CertificateBuilder b = Certificates.builder(
                new X500Name("CN=" + cn), Certificates.subjectOf(cert), leaf.getPublic(), from, lifetime);
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
        return new Issued(Certificates.sign(b, keys.getPrivate()), leaf);
    }

    /** Signs a certificate this CA issues, for a test that builds one of its own shape. */
    public X509Certificate sign(X509v3CertificateBuilder b) throws GeneralSecurityException {
        return Certificates.sign(b, keys.getPrivate());
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

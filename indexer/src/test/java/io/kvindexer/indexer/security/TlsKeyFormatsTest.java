package io.kvindexer.indexer.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerCli;
import io.kvindexer.indexer.testkit.LogCapture;
import io.kvindexer.indexer.testkit.SecuredIndexer;
import io.kvindexer.tls.Certificates;
import io.kvindexer.tls.PemFormat;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import javax.crypto.Cipher;
import javax.crypto.EncryptedPrivateKeyInfo;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import javax.crypto.spec.PBEParameterSpec;
import javax.net.ssl.SSLSocket;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.jce.provider.BouncyCastleProvider;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcePEMEncryptorBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The key encodings users bring (openssl's defaults among them): the readable ones are served, the others are
 * refused with what they are and how to convert them, at start (a startup error) and at a reload (the old pair
 * stays in service).
 */
class TlsKeyFormatsTest {

    @TempDir
    Path dir;

    @Test
    void rsaKeysInPkcs8AndPkcs1AreServed() throws Exception {
        TestCa ca = TestCa.create("formats CA");
        KeyPair rsa = rsaKeys();
        X509Certificate cert = issue(ca, rsa);
        Path certFile = Files.writeString(dir.resolve("tls.crt"), PemFormat.certificate(cert));
        Path pkcs1 = Files.writeString(dir.resolve("pkcs1.key"), pem(rsa.getPrivate()));
        assertThat(Files.readString(pkcs1)).startsWith("-----BEGIN RSA PRIVATE KEY-----");
        try (IndexerApp app = SecuredIndexer.start(
                List.of("--tls-cert-file", certFile.toString(), "--tls-key-file", pkcs1.toString()))) {
            assertThat(servedSerial(ca, app.port())).isEqualTo(cert.getSerialNumber());
        }
    }

    @Test
    void keysTheIndexerCannotReadAreNamedWithTheirFix() throws Exception {
        TestCa ca = TestCa.create("formats CA");
        KeyPair ec = Certificates.ecKeys();
        Path certFile = Files.writeString(dir.resolve("tls.crt"), PemFormat.certificate(issue(ca, ec)));
        Path sec1 = Files.writeString(dir.resolve("sec1.key"), pem(ec.getPrivate()));
        assertThat(Files.readString(sec1)).startsWith("-----BEGIN EC PRIVATE KEY-----");
        Path encryptedPkcs8 = Files.writeString(dir.resolve("enc8.key"), encryptedPkcs8(ec));
        assertThat(Files.readString(encryptedPkcs8)).startsWith("-----BEGIN ENCRYPTED PRIVATE KEY-----");
        Path encryptedPkcs1 = Files.writeString(dir.resolve("enc1.key"), encryptedTraditional(rsaKeys()));
        assertThat(Files.readString(encryptedPkcs1)).contains("Proc-Type: 4,ENCRYPTED");
        Path noKey = Files.writeString(dir.resolve("none.key"), PemFormat.certificate(ca.cert()));

        String prefix = "invalid value for --tls-cert-file/--tls-key-file: ";
        assertThat(startError(certFile, sec1))
                .isEqualTo(prefix + "the key in " + sec1 + " is an EC key in SEC1 form (BEGIN EC PRIVATE KEY); the"
                        + " indexer reads PKCS#8 (BEGIN PRIVATE KEY); convert it with `openssl pkcs8 -topk8 -nocrypt"
                        + " -in " + sec1 + " -out key.pem`");
        assertThat(startError(certFile, encryptedPkcs8))
                .isEqualTo(prefix + "the key in " + encryptedPkcs8 + " is encrypted with a passphrase, which the"
                        + " indexer does not take; convert it with `openssl pkcs8 -topk8 -nocrypt -in "
                        + encryptedPkcs8 + " -out key.pem`");
        assertThat(startError(certFile, encryptedPkcs1))
                .startsWith(prefix + "the key in " + encryptedPkcs1 + " is encrypted with a passphrase");
        assertThat(startError(certFile, noKey))
                .isEqualTo(prefix + "no PEM private key (BEGIN PRIVATE KEY) in " + noKey);
        assertThat(startError(sec1, sec1)).contains("is an EC key in SEC1 form");
        Path missing = dir.resolve("missing.crt");
        assertThat(startError(missing, sec1))
                .isEqualTo(prefix + "cannot read " + missing + ": no such file or directory");
    }

    @Test
    void anEncryptedKeyAtReloadKeepsTheServedPairAndSaysWhy() throws Exception {
        TestCa ca = TestCa.create("formats CA");
        Path cert = dir.resolve("tls.crt");
        Path key = dir.resolve("tls.key");
        TestCa.Issued first = ca.issue("first");
        first.write(cert, key);
        try (LogCapture log = LogCapture.warningsOf("io.kvindexer.indexer.SecurityReloads");
                IndexerApp app = SecuredIndexer.start(
                        List.of("--tls-cert-file", cert.toString(), "--tls-key-file", key.toString()))) {
            TestCa.Issued next = ca.issue("next");
            Files.writeString(cert, PemFormat.certificate(next.cert()));
            Files.writeString(key, encryptedPkcs8(next.keys()));
            // the two files are written one after the other: a reload may catch the new certificate with the old key
            String encrypted = "TLS files changed but are not usable yet (the key in " + key + " is encrypted";
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> log.warnings().stream().anyMatch(w -> w.startsWith(encrypted)));
            assertThat(log.warnings().stream()
                            .filter(w -> w.startsWith(encrypted))
                            .findFirst()
                            .orElseThrow())
                    .startsWith("TLS files changed but are not usable yet (the key in " + key
                            + " is encrypted with a passphrase")
                    .endsWith("; still serving the previous certificate");
            assertThat(servedSerial(ca, app.port())).isEqualTo(first.cert().getSerialNumber());
        }
    }

    private static String startError(Path cert, Path key) {
        Throwable t = org.assertj.core.api.Assertions.catchThrowable(() -> IndexerCli.parse(
                new String[] {"--tls-cert-file", cert.toString(), "--tls-key-file", key.toString()}, Map.of()));
        assertThat(t).isNotNull();
        return t.getMessage();
    }

    private static KeyPair rsaKeys() throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
        g.initialize(2048);
        return g.generateKeyPair();
    }

    private static X509Certificate issue(TestCa ca, KeyPair keys) throws Exception {
        X509v3CertificateBuilder b = Certificates.builder(
                new X500Name("CN=replica"),
                Certificates.subjectOf(ca.cert()),
                keys.getPublic(),
                Instant.now(),
                Duration.ofHours(1));
        b.addExtension(
                Extension.subjectAlternativeName,
                false,
                new GeneralNames(new GeneralName(GeneralName.iPAddress, "127.0.0.1")));
        return ca.sign(b);
    }

    /** The key in openssl's traditional form: PKCS#1 for RSA, SEC1 for EC. */
    private static String pem(Object key) throws Exception {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(out)) {
            w.writeObject(key);
        }
        return out.toString();
    }

    /** PKCS#8 encrypted with a passphrase ({@code BEGIN ENCRYPTED PRIVATE KEY}, as {@code openssl pkcs8 -topk8}). */
    private static String encryptedPkcs8(KeyPair keys) throws Exception {
        String algorithm = "PBEWithSHA1AndDESede";
        byte[] salt = new byte[16];
        new SecureRandom().nextBytes(salt);
        Cipher cipher = Cipher.getInstance(algorithm);
        cipher.init(
                Cipher.ENCRYPT_MODE,
                SecretKeyFactory.getInstance(algorithm).generateSecret(new PBEKeySpec("secret".toCharArray())),
                new PBEParameterSpec(salt, 2048));
        byte[] encrypted = cipher.doFinal(keys.getPrivate().getEncoded());
        return PemFormat.encode(
                "ENCRYPTED PRIVATE KEY", new EncryptedPrivateKeyInfo(cipher.getParameters(), encrypted).getEncoded());
    }

    private static String encryptedTraditional(KeyPair keys) throws Exception {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(out)) {
            w.writeObject(
                    keys.getPrivate(),
                    new JcePEMEncryptorBuilder("AES-256-CBC")
                            .setProvider(new BouncyCastleProvider())
                            .build("secret".toCharArray()));
        }
        return out.toString();
    }

    private static BigInteger servedSerial(TestCa ca, int port) throws Exception {
        try (SSLSocket s = (SSLSocket) ca.clientContext().getSocketFactory().createSocket("127.0.0.1", port)) {
            s.setSoTimeout(5000);
            s.startHandshake();
            return ((X509Certificate) s.getSession().getPeerCertificates()[0]).getSerialNumber();
        }
    }
}

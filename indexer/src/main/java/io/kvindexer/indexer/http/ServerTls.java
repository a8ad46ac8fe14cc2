package io.kvindexer.indexer.http;

import io.helidon.common.configurable.Resource;
import io.helidon.common.pki.Keys;
import io.helidon.common.tls.Tls;
import io.kvindexer.indexer.common.IoErrors;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.util.List;

/**
 * Helidon's TLS settings from a PEM certificate chain and a PEM private key ({@code --tls-cert-file},
 * {@code --tls-key-file}). The key must be unencrypted PKCS#8 ({@code BEGIN PRIVATE KEY}) or PKCS#1 RSA: Helidon
 * reads those; cert-manager's {@code privateKey.encoding: PKCS8} gives the former for every algorithm. Any other
 * key is refused with what it is and the command that converts it. The pair is checked to
 * belong together before it is served, so a reload that catches the key of one rotation and the certificate of
 * another keeps the old pair instead of breaking every handshake.
 */
public final class ServerTls {

    private ServerTls() {}

    /** The server TLS of the pair; {@link IllegalArgumentException} naming the file at fault otherwise. */
    public static Tls load(Path certFile, Path keyFile) {
        String unreadable = unreadable(certFile, keyFile);
        if (unreadable != null) {
            throw new IllegalArgumentException(unreadable);
        }
        Keys keys;
        try {
            keys = Keys.builder()
                    .pem(p -> p.key(Resource.create(keyFile)).certChain(Resource.create(certFile)))
                    .build();
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(
                    "cannot read the TLS key " + keyFile + " or certificate " + certFile + ": " + e.getMessage(), e);
        }
        PrivateKey key =
                keys.privateKey().orElseThrow(() -> new IllegalArgumentException("no private key in " + keyFile));
        List<X509Certificate> chain = keys.certChain();
        if (chain.isEmpty()) {
            throw new IllegalArgumentException("no certificate in " + certFile);
        }
        if (!belongTogether(key, chain.getFirst())) {
            throw new IllegalArgumentException(
                    "the key in " + keyFile + " does not belong to the certificate in " + certFile);
        }
        return Tls.builder().privateKey(key).privateKeyCertChain(chain).build();
    }

    /**
     * What keeps the files from being read, in words and with the fix, or null: Helidon's own texts name neither
     * file nor cause for the common mistakes ("It is not RSA, DSA or EC" for an encrypted key).
     */
    static String unreadable(Path certFile, Path keyFile) {
        String key;
        String cert;
        try {
            key = Files.readString(keyFile, StandardCharsets.ISO_8859_1);
            cert = Files.readString(certFile, StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            Path file = Files.isReadable(keyFile) ? certFile : keyFile;
            return "cannot read " + file + ": " + IoErrors.describe(e, file);
        }
        String toPkcs8 = "; convert it with `openssl pkcs8 -topk8 -nocrypt -in " + keyFile + " -out key.pem`";
        if (key.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") || key.contains("Proc-Type: 4,ENCRYPTED")) {
            return "the key in " + keyFile + " is encrypted with a passphrase, which the indexer does not take"
                    + toPkcs8;
        }
        if (key.contains("-----BEGIN EC PRIVATE KEY-----")) {
            return "the key in " + keyFile + " is an EC key in SEC1 form (BEGIN EC PRIVATE KEY); the indexer reads"
                    + " PKCS#8 (BEGIN PRIVATE KEY)" + toPkcs8;
        }
        if (!key.contains("-----BEGIN PRIVATE KEY-----") && !key.contains("-----BEGIN RSA PRIVATE KEY-----")) {
            return "no PEM private key (BEGIN PRIVATE KEY) in " + keyFile;
        }
        if (!cert.contains("-----BEGIN CERTIFICATE-----")) {
            return "no PEM certificate (BEGIN CERTIFICATE) in " + certFile;
        }
        return null;
    }

    /** Signs a random challenge with the key and verifies it with the certificate's public key. */
    static boolean belongTogether(PrivateKey key, X509Certificate cert) {
        String algorithm = switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            case "Ed25519", "EdDSA" -> "Ed25519";
            default -> null;
        };
        if (algorithm == null) {
            return true; // an algorithm we cannot test: let the handshake decide
        }
        try {
            byte[] challenge = new byte[32];
            new SecureRandom().nextBytes(challenge);
            Signature signer = Signature.getInstance(algorithm);
            signer.initSign(key);
            signer.update(challenge);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance(algorithm);
            verifier.initVerify(cert.getPublicKey());
            verifier.update(challenge);
            return verifier.verify(signature);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }
}

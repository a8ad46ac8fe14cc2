package io.kvindexer.tls;

import static org.assertj.core.api.Assertions.assertThat;

import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.junit.jupiter.api.Test;

/** Where the path from a served leaf breaks off, with a root, an intermediate and leaves generated here. */
class ServedChainTest {

    private static final Instant NOW = Instant.now();
    private static final Duration DAY = Duration.ofDays(1);

    private final KeyPair rootKeys = Certificates.ecKeys();
    private final X509Certificate root = ca(new X500Name("CN=root"), rootKeys, new X500Name("CN=root"), rootKeys, 1);
    private final KeyPair intermediateKeys = Certificates.ecKeys();
    private final X509Certificate intermediate =
            ca(new X500Name("CN=intermediate"), intermediateKeys, new X500Name("CN=root"), rootKeys, 0);

    ServedChainTest() throws GeneralSecurityException {}

    @Test
    void aLeafOfAnIntermediateServedWithoutItBreaksOffAtTheLeaf() throws Exception {
        X509Certificate leaf = leaf(new X500Name("CN=intermediate"), intermediateKeys);
        assertThat(ServedChain.missingIssuer(List.of(leaf), List.of(root))).isSameAs(leaf);
        // the intermediate as a "root" the replica knows does not make it one the clients know
        assertThat(ServedChain.missingIssuer(List.of(leaf), List.of(root, intermediate)))
                .isSameAs(leaf);
    }

    @Test
    void aLeafServedWithItsIntermediateReachesAKnownRoot() throws Exception {
        X509Certificate leaf = leaf(new X500Name("CN=intermediate"), intermediateKeys);
        assertThat(ServedChain.missingIssuer(List.of(leaf, intermediate), List.of(root)))
                .isNull();
        assertThat(ServedChain.missingIssuer(List.of(leaf, intermediate, root), List.of()))
                .isNull();
        // an unknown root: the path breaks off after the intermediate
        assertThat(ServedChain.missingIssuer(List.of(leaf, intermediate), List.of()))
                .isSameAs(intermediate);
    }

    @Test
    void aLeafOfAKnownRootOrSelfSignedIsComplete() throws Exception {
        X509Certificate leaf = leaf(new X500Name("CN=root"), rootKeys);
        assertThat(ServedChain.missingIssuer(List.of(leaf), List.of(root))).isNull();
        assertThat(ServedChain.missingIssuer(List.of(leaf), List.of())).isSameAs(leaf);
        assertThat(ServedChain.missingIssuer(List.of(root), List.of())).isNull();
    }

    @Test
    void aCertificateOfTheSameNameButAnotherKeyIsNoIssuer() throws Exception {
        X509Certificate leaf = leaf(new X500Name("CN=intermediate"), intermediateKeys);
        KeyPair otherKeys = Certificates.ecKeys();
        X509Certificate impostor = ca(new X500Name("CN=intermediate"), otherKeys, new X500Name("CN=root"), rootKeys, 0);
        assertThat(ServedChain.missingIssuer(List.of(leaf, impostor), List.of(root)))
                .isSameAs(leaf);
    }

    @Test
    void theJdkRootsAreThere() {
        assertThat(ServedChain.jdkRoots()).isNotEmpty();
    }

    private static X509Certificate ca(X500Name subject, KeyPair keys, X500Name issuer, KeyPair issuerKeys, int pathLen)
            throws GeneralSecurityException {
        X509v3CertificateBuilder b = Certificates.builder(subject, issuer, keys.getPublic(), NOW, DAY);
        try {
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(pathLen));
        } catch (java.io.IOException e) {
            throw new GeneralSecurityException(e);
        }
        return Certificates.sign(b, issuerKeys.getPrivate());
    }

    private static X509Certificate leaf(X500Name issuer, KeyPair issuerKeys) throws GeneralSecurityException {
        KeyPair keys = Certificates.ecKeys();
        return Certificates.sign(
                Certificates.builder(new X500Name("CN=replica"), issuer, keys.getPublic(), NOW, DAY),
                issuerKeys.getPrivate());
    }
}

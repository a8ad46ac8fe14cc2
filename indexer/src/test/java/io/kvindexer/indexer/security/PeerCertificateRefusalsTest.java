package io.kvindexer.indexer.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.recovery.PeerRecovery;
import io.kvindexer.indexer.testkit.LogCapture;
import io.kvindexer.indexer.testkit.SecuredIndexer;
import io.kvindexer.tls.Certificates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Peers whose certificate this replica refuses for different reasons: each recovery warning says which reason, and
 * the next peer is tried. The JDK says "PKIX" for an expired certificate as for an unknown CA; the log said "not
 * signed by a CA this replica trusts" for both, sending the reader to the wrong file.
 */
class PeerCertificateRefusalsTest {

    @TempDir
    Path dir;

    @Test
    void eachRefusedPeerCertificateIsNamedForWhatIsWrong() throws Exception {
        TestCa ca = TestCa.create("peers CA");
        Path caFile = ca.writeCert(dir.resolve("ca.crt"));
        Instant now = Instant.now();
        Path expired = serving("expired", ca.issue("expired", now.minus(Duration.ofDays(3)), Duration.ofDays(1)));
        Path early = serving("early", ca.issue("early", now.plus(Duration.ofDays(3)), Duration.ofDays(1)));
        Path otherName = serving("other-name", issueForNameOnly(ca, "peer.example"));
        Path unknownCa = serving("unknown-ca", TestCa.create("another CA").issue("unknown-ca"));
        try (IndexerApp p1 = start(expired);
                IndexerApp p2 = start(early);
                IndexerApp p3 = start(otherName);
                IndexerApp p4 = start(unknownCa);
                LogCapture log = LogCapture.warningsOf(PeerRecovery.class)) {
            List<String> peers = List.of(
                    "https://localhost:" + p1.port(),
                    "https://localhost:" + p2.port(),
                    "https://localhost:" + p3.port(),
                    "https://localhost:" + p4.port());
            try (IndexerApp replica = IndexerApp.start(
                    "--host",
                    "127.0.0.1",
                    "--port",
                    "0",
                    "--peers",
                    String.join(",", peers),
                    "--tls-ca-file",
                    caFile.toString())) {
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> log.warnings().stream()
                                        .filter(w -> w.startsWith("P2P recovery from"))
                                        .count()
                                == 4);
                assertThat(replica.config().peers()).containsExactlyElementsOf(peers);
            }
            List<String> failed = log.warnings().stream()
                    .filter(w -> w.startsWith("P2P recovery from"))
                    .toList();
            assertThat(failed.get(0))
                    .startsWith("P2P recovery from " + peers.get(0) + " failed: the peer's TLS certificate (or one of"
                            + " its chain) has expired: renew the peer's --tls-cert-file: ");
            assertThat(failed.get(1))
                    .startsWith("P2P recovery from " + peers.get(1) + " failed: the peer's TLS certificate (or one of"
                            + " its chain) is not valid yet: check the peer's --tls-cert-file and both clocks: ");
            assertThat(failed.get(2))
                    .startsWith("P2P recovery from " + peers.get(2) + " failed: the peer's TLS certificate does not"
                            + " name the host of its URL");
            assertThat(failed.get(3))
                    .startsWith("P2P recovery from " + peers.get(3) + " failed: the peer's TLS certificate is not"
                            + " signed by a CA this replica trusts");
        }
    }

    private Path serving(String name, TestCa.Issued issued) throws Exception {
        Path sub = Files.createDirectories(dir.resolve(name));
        issued.write(sub.resolve("tls.crt"), sub.resolve("tls.key"));
        return sub;
    }

    private static IndexerApp start(Path files) throws Exception {
        return SecuredIndexer.start(List.of(
                "--tls-cert-file",
                files.resolve("tls.crt").toString(),
                "--tls-key-file",
                files.resolve("tls.key").toString()));
    }

    /** A certificate of {@code ca} for {@code dnsName} only: not for localhost, which the peer URL names. */
    private static TestCa.Issued issueForNameOnly(TestCa ca, String dnsName) throws Exception {
        KeyPair leaf = Certificates.ecKeys();
        X509v3CertificateBuilder b = Certificates.builder(
                new X500Name("CN=" + dnsName),
                Certificates.subjectOf(ca.cert()),
                leaf.getPublic(),
                Instant.now(),
                Duration.ofHours(1));
        b.addExtension(
                Extension.subjectAlternativeName,
                false,
                new GeneralNames(new GeneralName(GeneralName.dNSName, dnsName)));
        return new TestCa.Issued(ca.sign(b), leaf);
    }
}

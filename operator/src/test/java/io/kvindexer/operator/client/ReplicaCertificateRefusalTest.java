package io.kvindexer.operator.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.testkit.SecuredIndexer;
import io.kvindexer.operator.indexer.OperatorCa;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A replica serving a certificate of its KvIndexer's CA that has expired: the operator's call fails, and says the
 * certificate expired. The JDK's text alone ("PKIX path validation failed") reads like an unknown CA.
 */
class ReplicaCertificateRefusalTest {

    @TempDir
    Path dir;

    @Test
    void anExpiredReplicaCertificateIsNamedAsExpired() throws Exception {
        Instant now = Instant.now();
        OperatorCa ca = OperatorCa.create("ns", now);
        ReplicaAccess access = new ReplicaAccess("ns/kv", "https", null, ca.certPem());
        IndexerClient client =
                new IndexerClient(Duration.ofSeconds(5), Duration.ofSeconds(30), IndexerClient.CallObserver.NONE);
        OperatorCa.Pem expired =
                ca.issue("kv-0", List.of("kv.ns.svc"), now.minus(OperatorCa.CERT_LIFETIME.plusDays(10)));
        OperatorCa.Pem current = ca.issue("kv-1", List.of("kv.ns.svc"), now);
        try (IndexerApp stale = serving("stale", expired);
                IndexerApp fresh = serving("fresh", current)) {
            // the same CA and client reach the replica with a current certificate: only the date differs
            assertThat(client.peers(IndexerEndpoint.of("kv-1", "127.0.0.1", fresh.port(), access)))
                    .isEmpty();
            assertThatThrownBy(() -> client.peers(IndexerEndpoint.of("kv-0", "127.0.0.1", stale.port(), access)))
                    .isInstanceOf(IndexerClientException.class)
                    .hasMessageStartingWith("kv-0 (https://127.0.0.1:" + stale.port() + ") unreachable: the replica's"
                            + " TLS certificate (or one of its chain) has expired: renew the certificate of the"
                            + " KvIndexer's <name>-tls Secret: SSLHandshakeException: ")
                    .hasMessageNotContaining("not signed by");
        }
    }

    private IndexerApp serving(String name, OperatorCa.Pem pem) throws Exception {
        Path sub = Files.createDirectories(dir.resolve(name));
        Path cert = Files.writeString(sub.resolve("tls.crt"), pem.cert());
        Path key = Files.writeString(sub.resolve("tls.key"), pem.key());
        return SecuredIndexer.start(List.of("--tls-cert-file", cert.toString(), "--tls-key-file", key.toString()));
    }
}

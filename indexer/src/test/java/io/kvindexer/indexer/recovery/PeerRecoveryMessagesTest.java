package io.kvindexer.indexer.recovery;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.index.IndexOptions;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.testkit.LogCapture;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;

/** What a failed recovery logs: the peer's own words, and for a token or a certificate problem the flag to set. */
class PeerRecoveryMessagesTest {

    private static final URI DUMP = URI.create("https://a:8090/dump?registrations=true");

    @Test
    void aRefusalCarriesThePeersErrorAndForA401WhatToSetHere() {
        assertThat(PeerRecovery.refusal(DUMP, 401, "{\"error\":\"invalid bearer token\"}", true))
                .isEqualTo("GET " + DUMP + " answered 401 {\"error\":\"invalid bearer token\"} (this replica's token is"
                        + " not the peer's: give both the same --auth-token-file)");
        assertThat(PeerRecovery.refusal(DUMP, 401, "", false))
                .endsWith("answered 401 (the peer wants a bearer token: give this replica its --auth-token-file)");
        assertThat(PeerRecovery.refusal(DUMP, 503, "", false)).isEqualTo("GET " + DUMP + " answered 503");
    }

    @Test
    void anUntrustedCertificateNamesTheFlagThatTrustsIt() {
        SSLHandshakeException pkix = new SSLHandshakeException("(certificate_unknown) PKIX path building failed: x");
        assertThat(PeerRecovery.describe(pkix))
                .startsWith("the peer's TLS certificate is not signed by a CA this replica trusts (--tls-ca-file")
                .endsWith(pkix.getMessage());
        assertThat(PeerRecovery.describe(new IOException("GET x answered 500"))).isEqualTo("GET x answered 500");
        assertThat(PeerRecovery.describe(new ConnectException("Connection refused")))
                .isEqualTo("Connection refused");
    }

    /** The JDK's HTTP client reports a refused connection as a bare {@code java.net.ConnectException}: said in words. */
    @Test
    void aPeerThatIsDownIsSaidToBeSo() throws Exception {
        int port;
        try (ServerSocket closed = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = closed.getLocalPort();
        }
        try (Indexers indexers = new Indexers(IndexOptions.defaults());
                LogCapture log = LogCapture.warningsOf(PeerRecovery.class)) {
            String peer = "http://127.0.0.1:" + port;
            assertThat(new PeerRecovery(List.of(peer), indexers, Duration.ZERO, Duration.ofSeconds(10)).fetch())
                    .isNull();
            assertThat(log.warnings())
                    .filteredOn(w -> w.contains(peer))
                    .singleElement()
                    .asString()
                    .contains("cannot connect (nothing answers there: the peer is down, or its host or port is wrong)")
                    .doesNotContain("java.net.ConnectException");
        }
    }
}

package io.kvindexer.indexer.recovery;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
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
        assertThat(PeerRecovery.describe(new ConnectException())).isEqualTo("java.net.ConnectException");
    }
}

package io.kvindexer.indexer.registry;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Peer base URLs: what recovery may fetch from, IPv6 bracketed. */
class PeerUrlTest {

    @Test
    void acceptsHostsAndBracketedIpv6() {
        for (String ok : new String[] {
            "http://kv-indexer-1.kv-indexer-peers:8090",
            "https://10.0.0.5:8090",
            "http://[::1]:8090",
            "http://[fd00::12]:8090",
            "http://[::ffff:127.0.0.1]:8090",
            "http://peer"
        }) {
            assertThat(PeerUrl.problem(ok)).as(ok).isNull();
        }
    }

    @Test
    void refusesUnbracketedIpv6AndOtherForms() {
        assertThat(PeerUrl.problem("http://::1:8090"))
                .isEqualTo("invalid peer URL `http://::1:8090`: bracket an IPv6 address, e.g. http://[::1]:8090");
        assertThat(PeerUrl.problem("http://fd00::12:8090")).contains("bracket an IPv6 address");
        assertThat(PeerUrl.problem("http://[::1:8090")).startsWith("invalid peer URL `http://[::1:8090`: ");
        assertThat(PeerUrl.problem("file:///etc/passwd")).endsWith("scheme must be http or https");
        assertThat(PeerUrl.problem("http://[::1]:0")).endsWith("port must be 1..65535");
        assertThat(PeerUrl.problem("http://[::1]:8090/?x=1")).endsWith("query and fragment are not allowed");
        assertThat(PeerUrl.problem("")).isEqualTo("peer URL is empty");
    }

    /** A refused URL's password is not repeated in the message, which a --peers flag's start writes to the log. */
    @Test
    void aRefusedUrlsUserInfoIsMasked() {
        assertThat(PeerUrl.problem("http://bob:s3cret@peer:8090"))
                .isEqualTo("invalid peer URL `http://***@peer:8090`: user info, query and fragment are not allowed");
        assertThat(PeerUrl.problem("ftp://bob:s3cret@peer"))
                .isEqualTo("invalid peer URL `ftp://***@peer`: scheme" + " must be http or https");
        assertThat(PeerUrl.problem("http://bob:s3cret@pe er:8090"))
                .startsWith("invalid peer URL `http://***@pe er:8090`: ")
                .doesNotContain("s3cret");
    }
}

package io.kvindexer.indexer;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

/** A --host the server cannot listen on is a bad value naming --host; only a taken port hints at another indexer. */
class ListenCheckTest {

    @Test
    void aHostThatDoesNotResolveIsABadHost() {
        for (String host : new String[] {"999.1.1.1", "nosuchhost.invalid"}) {
            assertThatThrownBy(() -> ListenCheck.require(host, 18_301, false))
                    .as(host)
                    .isInstanceOf(ConfigException.class)
                    .hasMessage("invalid value for --host: `" + host + "` does not resolve to an address");
        }
        // the app's start goes through it, so the process exits 2 (IndexerMainProcessTest)
        assertThatThrownBy(() -> IndexerApp.start("--host", "nosuchhost.invalid", "--port", "0"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("--host");
    }

    /** 192.0.2.1 is TEST-NET-1 (RFC 5737): an address, but none of this machine's. */
    @Test
    void anAddressOfAnotherMachineIsABadHostOnAnyPort() {
        for (int port : new int[] {0, 18_301}) {
            assertThatThrownBy(() -> ListenCheck.require("192.0.2.1", port, false))
                    .isInstanceOf(ConfigException.class)
                    .hasMessageStartingWith("invalid value for --host: cannot listen on `192.0.2.1`: ")
                    .message()
                    .doesNotContain("another kv-indexer");
        }
    }

    @Test
    void aTakenPortOnAGoodHostHintsAtAnotherIndexer() throws Exception {
        try (ServerSocket taken = new ServerSocket()) {
            taken.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            int port = taken.getLocalPort();
            assertThatThrownBy(() -> ListenCheck.require("127.0.0.1", port, false))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("cannot listen on 127.0.0.1:" + port + ": ")
                    .hasMessageEndingWith("(is another kv-indexer running there? --port chooses another)");
        }
        assertThatCode(() -> ListenCheck.require("127.0.0.1", 0, false)).doesNotThrowAnyException();
        assertThatCode(() -> ListenCheck.require("localhost", 0, false)).doesNotThrowAnyException();
    }

    /**
     * A second demo's hint keeps --demo: {@code bin/run-indexer --port N}, as the other hint reads, would start the
     * service alone, without the demo's engines and curl lines.
     */
    @Test
    void aTakenPortOfTheDemoHintsAtTheDemoOnAnotherPort() throws Exception {
        try (ServerSocket taken = new ServerSocket()) {
            taken.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            int port = taken.getLocalPort();
            assertThatThrownBy(() -> IndexerApp.start("--demo", "--host", "127.0.0.1", "--port", "" + port))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageEndingWith("(is another kv-indexer running there? --demo --port " + (port + 1)
                            + " runs the demo on another port)");
        }
    }
}

package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import org.junit.jupiter.api.Test;

/** The subscriber's endpoints: split as the registry checks them (common/ZmqEndpoint), then what it connects to. */
class ZmqAddressTest {

    @Test
    void splitsHostAndPortLikeTheRegistryCheck() {
        ZmqAddress v6 = ZmqAddress.parse("tcp://[::1]:5557");
        assertThat(v6.host()).isEqualTo("::1");
        assertThat(v6.port()).isEqualTo(5557);
        assertThat(v6.resolve()).isEqualTo(new InetSocketAddress("::1", 5557));
        ZmqAddress named = ZmqAddress.parse("tcp://localhost:5558");
        assertThat(named.host()).isEqualTo("localhost");
        assertThat(named.port()).isEqualTo(5558);
        // only a name is looked up (off the poller); a literal connects as it is
        assertThat(named.needsLookup()).isTrue();
        assertThat(v6.needsLookup()).isFalse();
        assertThat(ZmqAddress.parse("tcp://10.0.0.7:5557").needsLookup()).isFalse();
        assertThat(ZmqAddress.parse("tcp://engine-3.svc:5557").needsLookup()).isTrue();
        ZmqAddress ipc = ZmqAddress.parse("ipc:///tmp/engine.sock");
        assertThat(ipc.family()).isEqualTo(StandardProtocolFamily.UNIX);
        assertThat(ipc.needsLookup()).isFalse();
        assertThat(ipc.resolve()).isEqualTo(UnixDomainSocketAddress.of("/tmp/engine.sock"));
    }

    @Test
    void namesWhatIsWrong() {
        assertThatThrownBy(() -> ZmqAddress.parse("tcp://host")).hasMessage("missing TCP port");
        assertThatThrownBy(() -> ZmqAddress.parse("tcp://[::1]5557")).hasMessage("missing TCP port");
        assertThatThrownBy(() -> ZmqAddress.parse("tcp://[::1:5557")).hasMessage("missing closing `]`");
        assertThatThrownBy(() -> ZmqAddress.parse("tcp://:5557")).hasMessage("missing TCP host");
        assertThatThrownBy(() -> ZmqAddress.parse("tcp://host:x")).hasMessage("invalid TCP port `x`");
        assertThatThrownBy(() -> ZmqAddress.parse("tcp://host:0")).hasMessage("invalid TCP port 0");
        assertThatThrownBy(() -> ZmqAddress.parse("tcp://host:65536")).hasMessage("invalid TCP port 65536");
        assertThatThrownBy(() -> ZmqAddress.parse("inproc://x"))
                .hasMessage("the inproc:// transport is not supported by the subscriber (tcp and ipc are)");
        assertThatThrownBy(() -> ZmqAddress.parse("host:5557")).hasMessage("missing scheme");
        // the wildcard vLLM binds: accepted by the registry (Dynamo's check), refused where the SUB connects
        assertThatThrownBy(() -> ZmqAddress.parse("tcp://*:5557").resolve())
                .hasMessageStartingWith("`*` is the address an engine binds (vLLM: tcp://*:5557), not one to connect");
    }
}

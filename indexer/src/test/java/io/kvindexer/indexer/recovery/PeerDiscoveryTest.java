package io.kvindexer.indexer.recovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@code --peers-dns}: parsing the target, URLs of resolved addresses, and which address is this process. */
class PeerDiscoveryTest {

    @Test
    void parsesNameAndPort() {
        assertThat(PeerDiscovery.Target.parse("kv-indexer-peers.ns.svc:8090"))
                .isEqualTo(new PeerDiscovery.Target("kv-indexer-peers.ns.svc", 8090));
        assertThat(PeerDiscovery.Target.parse("[::1]:8090")).isEqualTo(new PeerDiscovery.Target("::1", 8090));
        assertThat(PeerDiscovery.Target.parse("[::1]:8090").toString()).isEqualTo("[::1]:8090");
    }

    @Test
    void refusesMalformedTargets() {
        assertThatThrownBy(() -> PeerDiscovery.Target.parse("peers")).hasMessage("`peers`: expected <name>:<port>");
        assertThatThrownBy(() -> PeerDiscovery.Target.parse("peers:x"))
                .hasMessage("`peers:x`: the port is not a number");
        assertThatThrownBy(() -> PeerDiscovery.Target.parse("peers:0")).hasMessage("`peers:0`: port must be 1..65535");
        assertThatThrownBy(() -> PeerDiscovery.Target.parse(":8090")).hasMessage("`:8090`: no name");
        assertThatThrownBy(() -> PeerDiscovery.Target.parse("::1:8090"))
                .hasMessage("`::1:8090`: bracket an IPv6 address, e.g. [::1]:8090");
    }

    @Test
    void urlsBracketIpv6() throws Exception {
        assertThat(PeerDiscovery.url(InetAddress.getByName("10.0.0.5"), 8090)).isEqualTo("http://10.0.0.5:8090");
        assertThat(PeerDiscovery.url(InetAddress.getByName("fd00::12"), 8090))
                .isEqualTo("http://[fd00:0:0:0:0:0:0:12]:8090");
        assertThat(io.kvindexer.indexer.registry.PeerUrl.problem(PeerDiscovery.url(InetAddress.getByName("::1"), 8090)))
                .isNull();
    }

    @Test
    void aSpecificBindIsOnlyItsOwnAddressAndPort() throws Exception {
        InetAddress two = InetAddress.getByName("127.0.0.2");
        InetAddress three = InetAddress.getByName("127.0.0.3");
        assertThat(PeerDiscovery.isSelf(two, 8090, two, 8090, Set.of())).isTrue();
        assertThat(PeerDiscovery.isSelf(three, 8090, two, 8090, Set.of())).isFalse();
        assertThat(PeerDiscovery.isSelf(two, 8091, two, 8090, Set.of())).isFalse();
    }

    @Test
    void aWildcardBindIsEveryLocalAndLoopbackAddressOnItsPort() throws Exception {
        InetAddress any = InetAddress.getByName("0.0.0.0");
        InetAddress podIp = InetAddress.getByName("10.1.2.3");
        InetAddress otherPod = InetAddress.getByName("10.1.2.4");
        Set<InetAddress> local = Set.of(podIp);
        assertThat(PeerDiscovery.isSelf(podIp, 8090, any, 8090, local)).isTrue();
        assertThat(PeerDiscovery.isSelf(InetAddress.getByName("127.0.0.5"), 8090, any, 8090, local))
                .isTrue();
        assertThat(PeerDiscovery.isSelf(InetAddress.getByName("::1"), 8090, any, 8090, local))
                .isTrue();
        assertThat(PeerDiscovery.isSelf(otherPod, 8090, any, 8090, local)).isFalse();
        assertThat(PeerDiscovery.isSelf(podIp, 9000, any, 8090, local)).isFalse();
    }

    @Test
    void anUnresolvableNameGivesNoPeers() {
        assertThat(PeerDiscovery.resolve(new PeerDiscovery.Target("no-such-peers.invalid", 8090), "127.0.0.1", 8090))
                .isEmpty();
    }

    @Test
    void resolvesAllAddressesWithoutItself() {
        // a literal resolves to itself: bound to it on the same port, it is this process
        assertThat(PeerDiscovery.resolve(new PeerDiscovery.Target("127.0.0.1", 8090), "127.0.0.1", 8090))
                .isEmpty();
        assertThat(PeerDiscovery.resolve(new PeerDiscovery.Target("127.0.0.1", 8090), "127.0.0.2", 8090))
                .containsExactly("http://127.0.0.1:8090");
        assertThat(PeerDiscovery.resolve(new PeerDiscovery.Target("::1", 8090), "127.0.0.2", 8090))
                .containsExactly("http://[0:0:0:0:0:0:0:1]:8090");
    }
}

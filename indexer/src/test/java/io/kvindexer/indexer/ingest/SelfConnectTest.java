package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import org.junit.jupiter.api.Test;

/**
 * A subscriber that connects to a free port of its own host before the engine binds it can be given that port as
 * its own and reach itself; it must tell, and let the port go (a test's engine once failed to bind because of it).
 */
class SelfConnectTest {

    @Test
    void aSocketConnectedToItselfIsToldFromOneConnectedToAListener() throws Exception {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, loopback)) {
            port = probe.getLocalPort();
        }
        InetSocketAddress free = new InetSocketAddress(loopback, port);
        // bound to the port it connects to, with nothing listening: TCP's simultaneous open makes it its own peer
        try (SocketChannel self = SocketChannel.open()) {
            self.bind(free);
            self.connect(free);
            assertThat(Subscriber.connectedToItself(self)).isTrue();
        }
        try (ServerSocketChannel listener = ServerSocketChannel.open().bind(new InetSocketAddress(loopback, 0));
                SocketChannel client = SocketChannel.open(listener.getLocalAddress())) {
            assertThat(Subscriber.connectedToItself(client)).isFalse();
        }
    }
}

package io.kvindexer.indexer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/**
 * Whether the server can listen at {@code --host} and {@code --port}, checked before anything starts: Helidon would
 * log a long stack trace and say only that it cannot start. A host that does not resolve, or is no address of this
 * machine, is a bad {@code --host} (exit 2); a port that cannot be had on a good host is most often a second
 * {@code bin/run-indexer}, and only then is that the hint. For the demo the hint keeps {@code --demo}: given any
 * flag, {@code bin/run-indexer} starts the service alone, without the demo's engines.
 */
final class ListenCheck {

    private ListenCheck() {}

    static void require(String host, int port, boolean demo) throws ConfigException {
        InetSocketAddress address = new InetSocketAddress(host, port);
        if (address.isUnresolved()) {
            throw new ConfigException("invalid value for --host: `" + host + "` does not resolve to an address");
        }
        IOException refused = bind(address);
        if (refused == null) {
            return;
        }
        // the same address on any port tells a bad address from a taken port
        IOException anyPort = port == 0 ? refused : bind(new InetSocketAddress(address.getAddress(), 0));
        if (anyPort != null) {
            throw new ConfigException(
                    "invalid value for --host: cannot listen on `" + host + "`: " + anyPort.getMessage());
        }
        String hint = demo
                ? "--demo --port " + (port == 65535 ? 8090 : port + 1) + " runs the demo on another port"
                : "--port chooses another";
        throw new IllegalStateException("cannot listen on " + host + ":" + port + ": " + refused.getMessage()
                + " (is another kv-indexer running there? " + hint + ")");
    }

    private static IOException bind(InetSocketAddress address) {
        try (ServerSocket probe = new ServerSocket()) {
            probe.setReuseAddress(true); // as the server binds: a port in TIME_WAIT is free
            probe.bind(address);
            return null;
        } catch (IOException e) {
            return e;
        }
    }
}

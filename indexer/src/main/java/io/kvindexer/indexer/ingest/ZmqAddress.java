package io.kvindexer.indexer.ingest;

import io.kvindexer.indexer.common.Quoted;
import io.kvindexer.indexer.common.ZmqEndpoint;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ProtocolFamily;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.util.regex.Pattern;

/**
 * Where a SUB connects: {@code tcp://host:port} (a bracketed IPv6 literal allowed) or {@code ipc://path} (a Unix
 * domain socket, as libzmq binds it). A TCP host name is resolved again at every {@link #resolve()}, so a
 * reconnect follows a changed DNS record.
 */
record ZmqAddress(String endpoint, ProtocolFamily family, String host, int port, String path) {

    private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

    /** @throws IllegalArgumentException naming what is wrong */
    static ZmqAddress parse(String endpoint) {
        int sep = endpoint.indexOf("://");
        if (sep < 0) {
            throw new IllegalArgumentException("missing scheme");
        }
        String scheme = endpoint.substring(0, sep);
        String rest = endpoint.substring(sep + 3);
        return switch (scheme) {
            case "tcp" -> tcp(endpoint, rest);
            case "ipc" -> new ZmqAddress(endpoint, StandardProtocolFamily.UNIX, null, 0, rest);
            default ->
                throw new IllegalArgumentException(
                        "the " + scheme + ":// transport is not supported by the subscriber (tcp and ipc are)");
        };
    }

    private static ZmqAddress tcp(String endpoint, String rest) {
        ZmqEndpoint.HostPort split = ZmqEndpoint.splitTcp(rest);
        int port;
        try {
            port = Integer.parseInt(split.port());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid TCP port `" + Quoted.of(split.port()) + "`");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("invalid TCP port " + port);
        }
        return new ZmqAddress(endpoint, StandardProtocolFamily.INET, split.host(), port, null);
    }

    /**
     * A TCP host name, not an IP literal: its address must be looked up, which the subscriber does off its poller
     * ({@link HostLookup}), then connects to {@link #at}.
     */
    boolean needsLookup() {
        // an IPv6 literal has colons (its brackets are gone), an IPv4 one is dotted decimal: neither asks DNS
        return family != StandardProtocolFamily.UNIX
                && !host.equals("*")
                && !host.contains(":")
                && !IPV4.matcher(host).matches();
    }

    /** The socket address of a looked-up host. */
    SocketAddress at(InetAddress address) {
        return new InetSocketAddress(address, port);
    }

    /** The socket address now (a fresh DNS lookup for a host name); throws when the host cannot be resolved. */
    SocketAddress resolve() {
        if (family == StandardProtocolFamily.UNIX) {
            return UnixDomainSocketAddress.of(path);
        }
        if (host.equals("*")) {
            // Dynamo's check accepts it, so /register does too; the engine binds there, nobody connects there
            throw new IllegalArgumentException("`*` is the address an engine binds (vLLM: tcp://*:5557), not one to"
                    + " connect to: register the engine's host or IP");
        }
        InetSocketAddress a = new InetSocketAddress(host, port);
        if (a.isUnresolved()) {
            throw new IllegalArgumentException("unknown host " + host);
        }
        return a;
    }
}

package io.kvindexer.indexer.common;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.Collections;
import java.util.HashSet;
import java.util.Set;

/**
 * Whether a peer URL leads back to this process. The replica has no advertised URL of its own; what it knows for sure
 * is where it listens: its bind address ({@code --host}) and its port. A wildcard bind answers on every address of
 * this host and on loopback, a specific bind only on its own (replicas on 127.0.0.2 and 127.0.0.3 with one port are
 * peers). A name is resolved only when the port is this process's, and is this process only when every address it
 * resolves to is: a name of several replicas (a headless Service) may lead to a peer. Behind a port mapping or a
 * proxy the URL is not recognised, and is kept as before.
 */
public final class OwnAddress {

    private OwnAddress() {}

    /** Whether {@code url} (a checked peer URL, see {@code PeerUrl}) reaches this process, bound to {@code bindHost}. */
    public static boolean reachedBy(String url, String bindHost, int ownPort) {
        URI uri = URI.create(url);
        int port = uri.getPort() != -1 ? uri.getPort() : "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
        if (port != ownPort) {
            return false;
        }
        String host = uri.getHost();
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        InetAddress[] addresses;
        InetAddress bound;
        try {
            addresses = InetAddress.getAllByName(host);
            bound = InetAddress.getByName(bindHost);
        } catch (UnknownHostException e) {
            return false; // not known now: perhaps a peer that is not up yet
        }
        Set<InetAddress> local = bound.isAnyLocalAddress() ? localAddresses() : Set.of();
        for (InetAddress a : addresses) {
            if (!answersOn(a, bound, local)) {
                return false;
            }
        }
        return addresses.length > 0;
    }

    /** Whether a process bound to {@code bound} answers on {@code candidate} ({@code local}: this host's addresses). */
    public static boolean answersOn(InetAddress candidate, InetAddress bound, Set<InetAddress> local) {
        if (bound.isAnyLocalAddress()) {
            return candidate.isLoopbackAddress() || candidate.isAnyLocalAddress() || local.contains(candidate);
        }
        return candidate.equals(bound);
    }

    /** This host's addresses (every interface's); empty, with a warning, when the system cannot list them. */
    public static Set<InetAddress> localAddresses() {
        Set<InetAddress> out = new HashSet<>();
        try {
            for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                out.addAll(Collections.list(nic.getInetAddresses()));
            }
        } catch (SocketException e) {
            // without the list, only loopback and the wildcard are known to be this host
            System.getLogger(OwnAddress.class.getName())
                    .log(System.Logger.Level.WARNING, "cannot list this host''s addresses: {0}", e.getMessage());
        }
        return out;
    }
}

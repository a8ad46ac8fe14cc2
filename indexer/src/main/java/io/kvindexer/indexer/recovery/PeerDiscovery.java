package io.kvindexer.indexer.recovery;

import io.kvindexer.indexer.common.OwnAddress;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * {@code --peers-dns <name>:<port>}: the peers are every address {@code name} resolves to (all A and AAAA records),
 * this process excluded. In Kubernetes the name is the headless Service, which publishes only Ready replicas, so a
 * starting replica finds the ones it can recover from without a peer list in its pod template (which would change,
 * and roll every pod, on each scale).
 */
public final class PeerDiscovery {

    private static final System.Logger LOG = System.getLogger(PeerDiscovery.class.getName());

    /** A name and the HTTP port every replica listens on. */
    public record Target(String name, int port) {

        public Target {
            if (name == null || name.isEmpty()) {
                throw new IllegalArgumentException("no name");
            }
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("port must be 1..65535");
            }
        }

        /** Parses {@code name:port}; a literal IPv6 address is bracketed ({@code [::1]:8090}). */
        public static Target parse(String value) {
            int colon = value.lastIndexOf(':');
            if (colon < 0) {
                throw new IllegalArgumentException("`" + value + "`: expected <name>:<port>");
            }
            String name = value.substring(0, colon);
            if (name.startsWith("[") && name.endsWith("]")) {
                name = name.substring(1, name.length() - 1);
            } else if (name.contains(":")) {
                throw new IllegalArgumentException("`" + value + "`: bracket an IPv6 address, e.g. [::1]:8090");
            }
            int port;
            try {
                port = Integer.parseInt(value.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("`" + value + "`: the port is not a number");
            }
            try {
                return new Target(name, port);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("`" + value + "`: " + e.getMessage());
            }
        }

        @Override
        public String toString() {
            return (name.contains(":") ? "[" + name + "]" : name) + ":" + port;
        }
    }

    private PeerDiscovery() {}

    /**
     * The peer base URLs {@code target} resolves to, in the resolver's order, without this process (bound to
     * {@code bindHost}, listening on {@code ownPort}); empty when the name does not resolve.
     */
    public static List<String> resolve(Target target, String bindHost, int ownPort) {
        InetAddress[] addresses;
        try {
            addresses = InetAddress.getAllByName(target.name());
        } catch (UnknownHostException e) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "--peers-dns {0}: the name does not resolve ({1}); no peer from DNS",
                    target,
                    e.getMessage());
            return List.of();
        }
        InetAddress bound = boundAddress(bindHost);
        Set<InetAddress> local = bound.isAnyLocalAddress() ? OwnAddress.localAddresses() : Set.of();
        List<String> urls = new ArrayList<>();
        List<String> self = new ArrayList<>();
        for (InetAddress a : addresses) {
            String url = url(a, target.port());
            if (isSelf(a, target.port(), bound, ownPort, local)) {
                self.add(url);
            } else if (!urls.contains(url)) {
                urls.add(url);
            }
        }
        LOG.log(
                System.Logger.Level.INFO,
                "--peers-dns {0} resolved to {1} (this process, skipped: {2})",
                target,
                urls,
                self);
        return urls;
    }

    /** {@code http://addr:port}, an IPv6 address bracketed (and its zone, if any, percent-encoded). */
    public static String url(InetAddress address, int port) {
        String host = address.getHostAddress();
        if (address instanceof Inet6Address) {
            host = "[" + host.replace("%", "%25") + "]";
        }
        return "http://" + host + ":" + port;
    }

    /**
     * A URL of {@link #resolve} ({@code http://addr:port}) in each of {@code schemes}, in their order: the same
     * address asked over HTTPS, then plain HTTP, say, while a change of TLS rolls through the replicas.
     */
    public static List<String> inSchemes(String url, List<String> schemes) {
        String rest = url.substring(url.indexOf(':'));
        return schemes.stream().map(s -> s + rest).toList();
    }

    /**
     * Whether {@code candidate:port} is this process. A wildcard bind answers on every local and loopback address;
     * a specific bind only on its own (so replicas on 127.0.0.2 and 127.0.0.3 with one port are peers).
     */
    static boolean isSelf(InetAddress candidate, int port, InetAddress bound, int ownPort, Set<InetAddress> local) {
        return port == ownPort && OwnAddress.answersOn(candidate, bound, local);
    }

    private static InetAddress boundAddress(String bindHost) {
        try {
            return InetAddress.getByName(bindHost);
        } catch (UnknownHostException e) {
            throw new IllegalStateException("the HTTP bind address " + bindHost + " does not resolve", e);
        }
    }
}

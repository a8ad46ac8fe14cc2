package io.kvindexer.indexer.common;

/**
 * ZMQ endpoint strings: the check of those given to {@code /register} and {@code --workers} (compatibility.md, Engine
 * event streams), with Dynamo's error texts (the backticks are part of the message), and the split of a TCP address
 * into host and port, which the check and the listeners' connect share.
 */
public final class ZmqEndpoint {

    /** A TCP address split: the host (an IPv6 literal without its brackets) and the port, not yet read as a number. */
    public record HostPort(String host, String port) {}

    private ZmqEndpoint() {}

    /** Returns null when {@code endpoint} is valid, else the reason, e.g. {@code invalid ZMQ endpoint `x`: missing scheme}. */
    public static String problem(String endpoint) {
        String reason = reason(endpoint);
        return reason == null ? null : "invalid ZMQ endpoint `" + endpoint + "`: " + reason;
    }

    private static String reason(String endpoint) {
        int sep = endpoint.indexOf("://");
        if (sep < 0) {
            return "missing scheme";
        }
        String scheme = endpoint.substring(0, sep);
        String address = endpoint.substring(sep + 3);
        if (address.isEmpty()) {
            return "missing address";
        }
        return switch (scheme) {
            case "ipc", "inproc" -> null;
            case "tcp" -> tcpReason(address);
            default -> "unsupported scheme `" + scheme + "`";
        };
    }

    private static String tcpReason(String address) {
        HostPort split;
        try {
            split = splitTcp(address);
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
        return u16Problem(split.port());
    }

    /**
     * {@code host:port} or {@code [ipv6]:port}, the part after {@code tcp://}, split at the port's colon.
     *
     * @throws IllegalArgumentException with Dynamo's reason: {@code missing closing `]`}, {@code missing TCP port},
     *     {@code missing TCP host}
     */
    public static HostPort splitTcp(String address) {
        String host;
        String port;
        if (address.startsWith("[")) {
            int close = address.indexOf(']');
            if (close < 0) {
                throw new IllegalArgumentException("missing closing `]`");
            }
            if (!address.startsWith(":", close + 1)) {
                throw new IllegalArgumentException("missing TCP port");
            }
            host = address.substring(1, close);
            port = address.substring(close + 2);
        } else {
            int colon = address.lastIndexOf(':');
            if (colon < 0) {
                throw new IllegalArgumentException("missing TCP port");
            }
            host = address.substring(0, colon);
            port = address.substring(colon + 1);
        }
        if (host.isEmpty()) {
            throw new IllegalArgumentException("missing TCP host");
        }
        return new HostPort(host, port);
    }

    /** Mirrors the messages of Rust's u16 parser, which Dynamo appends verbatim. */
    private static String u16Problem(String port) {
        if (port.isEmpty()) {
            return "invalid TCP port: cannot parse integer from empty string";
        }
        for (int i = 0; i < port.length(); i++) {
            char c = port.charAt(i);
            if (c < '0' || c > '9') {
                if (i == 0 && c == '+' && port.length() > 1) {
                    continue;
                }
                return "invalid TCP port: invalid digit found in string";
            }
        }
        String digits = port.startsWith("+") ? port.substring(1) : port;
        if (digits.length() > 5 || Integer.parseInt(digits) > 65535) {
            return "invalid TCP port: number too large to fit in target type";
        }
        return null;
    }
}

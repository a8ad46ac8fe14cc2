package io.kvindexer.indexer.common;

/**
 * ZMQ endpoint strings: the check of those given to {@code /register} and {@code --workers} (compatibility.md, Engine
 * event streams), with Dynamo's error texts (the backticks are part of the message), and the split of a TCP address
 * into host and port, which the check and the listeners' connect share.
 */
public final class ZmqEndpoint {

    /** A TCP address split: the host (an IPv6 literal without its brackets) and the port, not yet read as a number. */
    public record HostPort(String host, String port) {}

    /**
     * The most characters an endpoint may have. A registered endpoint is kept, listed by {@code /workers}, written
     * into snapshots and dumps and quoted by log lines: without a bound one registration could carry megabytes. 512
     * holds a full-length host name, and a Unix socket's path is shorter still (108 bytes on Linux).
     */
    public static final int MAX_LENGTH = 512;

    /** The most characters of a TCP host: DNS's limit for a name written out (RFC 1035, 253 without the final dot). */
    public static final int MAX_HOST = 253;

    private ZmqEndpoint() {}

    /**
     * Returns null when {@code endpoint} is valid, else the reason, e.g. {@code invalid ZMQ endpoint `x`: missing
     * scheme}, which quotes the endpoint's first {@value Quoted#MAX} characters.
     */
    public static String problem(String endpoint) {
        String reason = lengthProblem(endpoint);
        if (reason == null) {
            reason = reason(endpoint);
        }
        return reason == null ? null : "invalid ZMQ endpoint `" + Quoted.of(endpoint) + "`: " + reason;
    }

    /**
     * Why {@code endpoint} is too long to be one; null when it is not: over {@link #MAX_LENGTH} characters, or a TCP
     * host over {@link #MAX_HOST}. The HTTP layer answers this one 422 naming the field, as it does a name's length.
     */
    public static String lengthProblem(String endpoint) {
        int length = endpoint.codePointCount(0, endpoint.length());
        if (length > MAX_LENGTH) {
            return length + " characters; the limit is " + MAX_LENGTH;
        }
        if (!endpoint.startsWith("tcp://")) {
            return null;
        }
        String host;
        try {
            host = splitTcp(endpoint.substring("tcp://".length())).host();
        } catch (IllegalArgumentException e) {
            return null; // malformed: reason() says how
        }
        int hostLength = host.codePointCount(0, host.length());
        return hostLength > MAX_HOST ? "a TCP host of " + hostLength + " characters; the limit is " + MAX_HOST : null;
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

package io.kvindexer.indexer.registry;

/**
 * Validation of ZMQ endpoint strings given to {@code /register} and {@code --workers} (compatibility.md, Engine event streams), with Dynamo's
 * error texts (the backticks are part of the message).
 */
public final class ZmqEndpoint {

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
        String host;
        String port;
        if (address.startsWith("[")) {
            int close = address.indexOf(']');
            if (close < 0) {
                return "missing closing `]`";
            }
            host = address.substring(1, close);
            String rest = address.substring(close + 1);
            if (!rest.startsWith(":")) {
                return "missing TCP port";
            }
            port = rest.substring(1);
        } else {
            int colon = address.lastIndexOf(':');
            if (colon < 0) {
                return "missing TCP port";
            }
            host = address.substring(0, colon);
            port = address.substring(colon + 1);
        }
        if (host.isEmpty()) {
            return "missing TCP host";
        }
        return u16Problem(port);
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

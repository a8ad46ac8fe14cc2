package io.kvindexer.indexer.common;

import java.util.regex.Pattern;

/**
 * An {@code http://} URL whose server speaks TLS: it answers the plain request with a TLS record (an alert, or a
 * handshake), which the JDK's HTTP client reports as an unparsable status line quoting the record's raw bytes. Seen
 * for what it is, the failure can say what to change instead of printing control characters.
 */
public final class PlainHttpToTls {

    /** What a failed request to such a URL says instead of the client's complaint. */
    public static final String HINT =
            "the peer speaks TLS, use https:// in its URL (and --tls-ca-file names the CA that issued its certificate)";

    /**
     * A TLS record header: content type alert (21) or handshake (22), then protocol major version 3 and a minor one
     * of SSL 3.0 to TLS 1.3; no text an HTTP server sends begins its status line so.
     */
    private static final Pattern RECORD = Pattern.compile("[\\x15\\x16]\\x03[\\x00-\\x04]");

    private PlainHttpToTls() {}

    /** Whether {@code e} (or a cause of it) is a plain HTTP client's complaint about a TLS reply. */
    public static boolean detected(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t.getMessage() != null && RECORD.matcher(t.getMessage()).find()) {
                return true;
            }
        }
        return false;
    }
}

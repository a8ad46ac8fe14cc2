package io.kvindexer.indexer.registry;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.regex.Pattern;

/**
 * Checks a peer base URL before it is stored or fetched: http or https, a host, a port in 1..65535 when given, no
 * user info, query or fragment (the indexer appends {@code /dump} to it); an IPv6 host is bracketed
 * ({@code http://[fd00::12]:8090}). Other schemes ({@code file:},
 * {@code jar:}) or odd forms could make recovery read something that is not a peer.
 */
public final class PeerUrl {

    /** a URL's user info ({@code user:password@}), which no message repeats */
    private static final Pattern USER_INFO = Pattern.compile("^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#@]*@");

    private PeerUrl() {}

    /** Why {@code url} is not a usable peer URL; null when it is. */
    public static String problem(String url) {
        if (url == null || url.isBlank()) {
            return "peer URL is empty";
        }
        if (url.length() > 2048) {
            return "peer URL is longer than 2048 characters";
        }
        URI uri;
        try {
            uri = new URI(url);
        } catch (URISyntaxException e) {
            // its message repeats the input
            return invalid(url, e.getReason() + " at index " + e.getIndex());
        }
        String scheme = uri.getScheme();
        if (scheme == null || !(scheme.equalsIgnoreCase("http") || scheme.equalsIgnoreCase("https"))) {
            return invalid(url, "scheme must be http or https");
        }
        String authority = uri.getRawAuthority();
        if (uri.getHost() == null && authority != null && authority.indexOf(':') != authority.lastIndexOf(':')) {
            return invalid(url, "bracket an IPv6 address, e.g. http://[::1]:8090");
        }
        if (uri.getHost() == null || uri.getHost().isEmpty()) {
            return invalid(url, "no host");
        }
        if (uri.getPort() != -1 && (uri.getPort() < 1 || uri.getPort() > 65535)) {
            return invalid(url, "port must be 1..65535");
        }
        if (uri.getRawUserInfo() != null || uri.getRawQuery() != null || uri.getRawFragment() != null) {
            return invalid(url, "user info, query and fragment are not allowed");
        }
        return null;
    }

    /**
     * Why {@code url} is refused, in the one form every refusal takes: the URL with its user info masked, as the
     * message goes to the log of a {@code --peers} flag and to the caller of {@code /register_peer}.
     */
    private static String invalid(String url, String why) {
        return "invalid peer URL `" + USER_INFO.matcher(url).replaceFirst("$1***@") + "`: " + why;
    }
}

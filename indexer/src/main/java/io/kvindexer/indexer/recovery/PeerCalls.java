package io.kvindexer.indexer.recovery;

import java.util.List;

/**
 * How startup recovery calls peers where that differs from how this replica serves: the schemes each address of
 * {@code --peers-dns} is asked in ({@code --peers-dns-schemes}) and the token sent to peers
 * ({@code --peer-auth-token-file}). While a change of TLS or of the token rolls through the replicas, the ones not
 * restarted yet still serve as before; these let a restarted replica recover from them (docs/kubernetes.md, "Turning
 * TLS or the token on or off").
 *
 * @param dnsSchemes the schemes, in the order asked; empty: the one this replica serves
 * @param authToken  the token sent to peers instead of this replica's own; null: its own
 */
public record PeerCalls(List<String> dnsSchemes, String authToken) {

    /** The schemes a URL of {@code --peers-dns} may have. */
    public static final List<String> SCHEMES = List.of("http", "https");

    /** Peers called as this replica serves. */
    public static final PeerCalls OWN = new PeerCalls(List.of(), null);

    public PeerCalls {
        dnsSchemes = List.copyOf(dnsSchemes);
        if (!SCHEMES.containsAll(dnsSchemes) || dnsSchemes.stream().distinct().count() != dnsSchemes.size()) {
            throw new IllegalArgumentException("schemes must be distinct, each http or https: " + dnsSchemes);
        }
    }

    /** The schemes to ask each address of {@code --peers-dns} in, {@code served} (this replica's) by default. */
    public List<String> dnsSchemes(String served) {
        return dnsSchemes.isEmpty() ? List.of(served) : dnsSchemes;
    }

    /** The token to send to peers: the one given for them, else {@code own} (null: none). */
    public String token(String own) {
        return authToken != null ? authToken : own;
    }

    @Override
    public String toString() {
        return "PeerCalls[dnsSchemes=" + dnsSchemes + ", authToken=" + (authToken == null ? "own" : "(given)") + "]";
    }
}

package io.kvindexer.operator.client;

/**
 * How the operator reaches the replicas of one KvIndexer: the scheme, the bearer token (null: none sent) and the
 * PEM CA certificates it trusts for HTTPS (null with {@code https}: the JDK's trust store).
 *
 * @param key    the KvIndexer ({@code namespace/name}): the client remembers the last token that worked per key,
 *               and tries it when the current one is refused in the middle of a rotation
 * @param scheme {@code http} or {@code https}
 * @param token  bearer token sent on every call, or null
 * @param caPem  the CA certificates that issued the replicas' certificate, or null
 */
public record ReplicaAccess(String key, String scheme, String token, String caPem) {
    /** Plain HTTP, no token. */
    public static final ReplicaAccess PLAIN = new ReplicaAccess("", "http", null, null);

    /** The namespace of the KvIndexer ({@link #key}'s first part), or "" when the key names none. */
    public String namespace() {
        int slash = key.indexOf('/');
        return slash < 0 ? "" : key.substring(0, slash);
    }

    /** Plain HTTP with a token (or none): the operator's token from its own environment. */
    public static ReplicaAccess plain(String token) {
        return new ReplicaAccess("", "http", token, null);
    }
}

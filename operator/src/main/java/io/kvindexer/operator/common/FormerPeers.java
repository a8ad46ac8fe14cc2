package io.kvindexer.operator.common;

import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * What a replica restarted by a change of {@code spec.security} needs to recover its index from the replicas not
 * restarted yet, which still serve as the spec said before ({@link ServedAs}): a restarting replica finds its peers
 * by {@code --peers-dns} and would otherwise ask them in its own scheme and with its own token, and start empty.
 * The operator adds this to the pod template while any replica pod still serves the former way, and takes it out
 * once none does: a second rollout, each of whose restarts recovers from peers that serve as it does.
 *
 * @param plain       TLS is on, and a replica still serves plain HTTP: the peers are asked over HTTPS, then plain HTTP
 * @param tlsSecret   TLS is off, and a replica still serves HTTPS with this Secret's certificate: its {@code ca.crt} is
 *                    trusted and the peers are asked over plain HTTP, then HTTPS; null otherwise
 * @param tokenSecret the token is off, and a replica still requires the token of this Secret: it is sent to peers
 *                    (never required of callers); null otherwise
 */
public record FormerPeers(boolean plain, String tlsSecret, String tokenSecret) {

    /** Every replica serves as the spec says: nothing to add. */
    public static final FormerPeers NONE = new FormerPeers(false, null, null);

    /** The client-only flag the token is sent to peers with ({@code --auth-token-file} would require it of callers). */
    public static final String PEER_TOKEN_FLAG = "--peer-auth-token-file";

    static final String SCHEMES_FLAG = "--peers-dns-schemes";

    /**
     * What the replica pods that serve as {@code served} (in ordinal order; a null entry, a pod that does not say, is
     * skipped) need of a new pod of {@code kvi}; the Secret of the lowest ordinal, which is restarted last, is taken.
     */
    public static FormerPeers of(KvIndexer kvi, Collection<ServedAs> served) {
        List<ServedAs> pods = served.stream().filter(Objects::nonNull).toList();
        boolean tls = IndexerSecurity.tlsEnabled(kvi);
        boolean plain = tls && pods.stream().anyMatch(s -> !s.tls());
        String tlsSecret = tls
                ? null
                : pods.stream()
                        .filter(ServedAs::tls)
                        .map(ServedAs::tlsSecret)
                        .filter(Objects::nonNull)
                        .findFirst()
                        .orElse(null);
        String tokenSecret = IndexerSecurity.authEnabled(kvi)
                ? null
                : pods.stream()
                        .filter(ServedAs::auth)
                        .map(ServedAs::tokenSecret)
                        .filter(Objects::nonNull)
                        .findFirst()
                        .orElse(null);
        return new FormerPeers(plain, tlsSecret, tokenSecret);
    }

    /**
     * The indexer flags: the schemes to ask peers in, the former CA and token, mounted where the pods of the former
     * template mount them (the features are off in the new one, so the paths are free).
     */
    public List<String> args() {
        List<String> args = new ArrayList<>();
        if (plain) {
            args.addAll(List.of(SCHEMES_FLAG, "https,http"));
        }
        if (tlsSecret != null) {
            args.addAll(List.of(
                    SCHEMES_FLAG,
                    "http,https",
                    "--tls-ca-file",
                    IndexerSecurity.TLS_DIR + "/" + IndexerSecurity.CA_KEY));
        }
        if (tokenSecret != null) {
            args.addAll(List.of(PEER_TOKEN_FLAG, IndexerSecurity.AUTH_DIR + "/" + IndexerSecurity.TOKEN_KEY));
        }
        return args;
    }

    public List<Volume> volumes() {
        List<Volume> volumes = new ArrayList<>();
        if (tlsSecret != null) {
            volumes.add(IndexerSecurity.secretVolume(IndexerSecurity.TLS_VOLUME, tlsSecret));
        }
        if (tokenSecret != null) {
            volumes.add(IndexerSecurity.secretVolume(IndexerSecurity.AUTH_VOLUME, tokenSecret));
        }
        return volumes;
    }

    public List<VolumeMount> mounts() {
        List<VolumeMount> mounts = new ArrayList<>();
        if (tlsSecret != null) {
            mounts.add(IndexerSecurity.mount(IndexerSecurity.TLS_VOLUME, IndexerSecurity.TLS_DIR));
        }
        if (tokenSecret != null) {
            mounts.add(IndexerSecurity.mount(IndexerSecurity.AUTH_VOLUME, IndexerSecurity.AUTH_DIR));
        }
        return mounts;
    }
}

package io.kvindexer.operator.common;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.SecretVolumeSource;
import io.fabric8.kubernetes.api.model.Volume;
import java.util.List;
import java.util.Objects;

/**
 * How one replica pod serves, read from its own spec: the template it was made from. A change of
 * {@code spec.security} rolls the pods one at a time, so until the rollout ends some serve as the spec said before;
 * each is called as it serves. TLS when its indexer container has {@code --tls-cert-file}, trusted by the
 * {@code ca.crt} of the Secret its {@code tls} volume mounts; a token when it has {@code --auth-token-file}, the one
 * of the Secret its {@code auth-token} volume mounts (a Secret is kept while a pod mounts it, SecuritySecrets).
 *
 * @param tlsSecret   the certificate Secret the pod mounts, or null
 * @param tokenSecret the token Secret the pod mounts, or null
 */
public record ServedAs(boolean tls, String tlsSecret, boolean auth, String tokenSecret) {

    public String scheme() {
        return tls ? "https" : "http";
    }

    /** How {@code pod} serves, or null when it has no indexer container (not made from a template of ours). */
    public static ServedAs of(Pod pod) {
        PodSpec spec = pod.getSpec();
        if (spec == null || spec.getContainers() == null) {
            return null;
        }
        Container indexer = spec.getContainers().stream()
                .filter(c -> IndexerNames.CONTAINER.equals(c.getName()))
                .findFirst()
                .orElse(null);
        if (indexer == null) {
            return null;
        }
        List<String> args = Objects.requireNonNullElse(indexer.getArgs(), List.of());
        boolean tls = args.contains(IndexerSecurity.TLS_CERT_FLAG);
        boolean auth = args.contains(IndexerSecurity.AUTH_TOKEN_FLAG);
        return new ServedAs(
                tls,
                tls ? secret(spec, IndexerSecurity.TLS_VOLUME) : null,
                auth,
                auth ? secret(spec, IndexerSecurity.AUTH_VOLUME) : null);
    }

    private static String secret(PodSpec spec, String volume) {
        if (spec.getVolumes() == null) {
            return null;
        }
        return spec.getVolumes().stream()
                .filter(v -> volume.equals(v.getName()) && v.getSecret() != null)
                .map(Volume::getSecret)
                .map(SecretVolumeSource::getSecretName)
                .findFirst()
                .orElse(null);
    }
}

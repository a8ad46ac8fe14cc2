package io.kvindexer.operator.e2e;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The kubelet's part for Secret volumes: each Secret a pod template mounts is written into a directory of its own
 * (one file per key, as a Secret volume holds it), and the container's arguments that point under the mount path
 * are pointed at that directory instead. {@link #refresh} rewrites the files from the Secrets again, as the kubelet
 * does after a Secret changes.
 */
final class SecretVolumes {
    private final KubernetesClient client;
    private final String namespace;
    private final Map<String, Path> mounts = new LinkedHashMap<>(); // mount path -> directory
    private final Map<String, String> secrets = new LinkedHashMap<>(); // mount path -> Secret name

    private SecretVolumes(KubernetesClient client, String namespace) {
        this.client = client;
        this.namespace = namespace;
    }

    /** Materialises the Secret volumes of {@code container} under {@code root}. */
    static SecretVolumes mount(KubernetesClient client, String namespace, PodSpec pod, Container container, Path root) {
        SecretVolumes v = new SecretVolumes(client, namespace);
        List<VolumeMount> volumeMounts = container.getVolumeMounts() == null ? List.of() : container.getVolumeMounts();
        for (VolumeMount m : volumeMounts) {
            // a mount of a volumeClaimTemplate has no pod volume: not a Secret, the test plays it otherwise
            Volume volume = pod.getVolumes().stream()
                    .filter(x -> x.getName().equals(m.getName()))
                    .findFirst()
                    .orElse(null);
            if (volume == null || volume.getSecret() == null) {
                continue;
            }
            Path dir = root.resolve(m.getName());
            v.mounts.put(m.getMountPath(), dir);
            v.secrets.put(m.getMountPath(), volume.getSecret().getSecretName());
        }
        v.refresh();
        return v;
    }

    /** Writes every mounted Secret's keys again (a missing Secret leaves its files as they were). */
    void refresh() {
        mounts.forEach((path, dir) -> {
            Secret s = client.secrets()
                    .inNamespace(namespace)
                    .withName(secrets.get(path))
                    .get();
            if (s == null) {
                return;
            }
            try {
                Files.createDirectories(dir);
                if (s.getData() != null) {
                    for (var e : s.getData().entrySet()) {
                        Path tmp = dir.resolve(e.getKey() + ".tmp");
                        Files.write(tmp, Base64.getDecoder().decode(e.getValue()));
                        Files.move(tmp, dir.resolve(e.getKey()), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    /** {@code args} with every path under a mount path moved to its directory. */
    List<String> rewrite(List<String> args) {
        List<String> out = new ArrayList<>(args.size());
        for (String a : args) {
            String r = a;
            for (var m : mounts.entrySet()) {
                if (a.startsWith(m.getKey() + "/")) {
                    r = m.getValue()
                            .resolve(a.substring(m.getKey().length() + 1))
                            .toString();
                }
            }
            out.add(r);
        }
        return out;
    }
}

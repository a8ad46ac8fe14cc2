package io.kvindexer.operator.common;

import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.NetworkPolicySettings;
import io.kvindexer.operator.crd.v1alpha1.Security;
import java.util.ArrayList;
import java.util.List;

/**
 * What {@code spec.security} and {@code spec.networkPolicy} decide, in one place: each feature is on unless the
 * spec says {@code enabled: false}; the Secrets' names and keys; where the pods mount them and the flags that point
 * the indexer at them.
 */
public final class IndexerSecurity {
    /** Key of the token in {@code <name>-auth}. */
    public static final String TOKEN_KEY = "token";
    /** The keys of a {@code kubernetes.io/tls} Secret, as cert-manager writes them. */
    public static final String CERT_KEY = "tls.crt";

    public static final String KEY_KEY = "tls.key";
    public static final String CA_KEY = "ca.crt";
    /** Where the indexer pods mount the two Secrets. */
    public static final String AUTH_DIR = "/var/run/kv-indexer/auth";

    public static final String TLS_DIR = "/var/run/kv-indexer/tls";
    /** The flags that turn TLS and the token on in a replica: how a pod's spec says it serves ({@link ServedAs}). */
    public static final String TLS_CERT_FLAG = "--tls-cert-file";

    public static final String AUTH_TOKEN_FLAG = "--auth-token-file";
    static final String AUTH_VOLUME = "auth-token";
    static final String TLS_VOLUME = "tls";

    private IndexerSecurity() {}

    public static boolean tlsEnabled(KvIndexer kvi) {
        Security s = kvi.getSpec().getSecurity();
        return s == null || s.tls() == null || !Boolean.FALSE.equals(s.tls().enabled());
    }

    public static boolean authEnabled(KvIndexer kvi) {
        Security s = kvi.getSpec().getSecurity();
        return s == null || s.auth() == null || !Boolean.FALSE.equals(s.auth().enabled());
    }

    public static boolean networkPolicyEnabled(KvIndexer kvi) {
        NetworkPolicySettings n = kvi.getSpec().getNetworkPolicy();
        return n == null || !Boolean.FALSE.equals(n.enabled());
    }

    /** The cert-manager issuer the spec names, or null (the operator's own CA issues the certificate). */
    public static Security.IssuerRef issuerRef(KvIndexer kvi) {
        Security s = kvi.getSpec().getSecurity();
        return s == null || s.tls() == null ? null : s.tls().issuerRef();
    }

    public static String scheme(KvIndexer kvi) {
        return tlsEnabled(kvi) ? "https" : "http";
    }

    /**
     * The namespace-wide token Secret of earlier versions, made by the user: pods with authentication off read it,
     * and the chart's operator Deployment reads it in its release namespace. No KvIndexer's token Secret has this name.
     */
    public static final String SHARED_TOKEN_SECRET = "kv-indexer-auth";

    /**
     * {@code <name>-auth}, except for a KvIndexer named {@code kv-indexer}, whose {@code <name>-auth} would be
     * {@link #SHARED_TOKEN_SECRET}: its token would then be required by every neighbour with authentication off and
     * become the chart operator's own token. That one is {@code kv-indexer-token} (no {@code <name>-auth} or
     * {@code <name>-tls} ends so).
     */
    public static String tokenSecret(KvIndexer kvi) {
        String name = kvi.getMetadata().getName();
        return (name + "-auth").equals(SHARED_TOKEN_SECRET) ? name + "-token" : name + "-auth";
    }

    /** Where earlier versions kept the token when that was not {@link #tokenSecret}, or null. */
    public static String formerTokenSecret(KvIndexer kvi) {
        String former = kvi.getMetadata().getName() + "-auth";
        return former.equals(tokenSecret(kvi)) ? null : former;
    }

    public static String tlsSecret(KvIndexer kvi) {
        return kvi.getMetadata().getName() + "-tls";
    }

    /** The client Service's name in the cluster, {@code <name>.<ns>.svc}: the certificate's subject, one of its names. */
    public static String serviceDnsName(KvIndexer kvi) {
        return IndexerNames.clientService(kvi) + "." + kvi.getMetadata().getNamespace() + ".svc";
    }

    /**
     * The DNS names the serving certificate covers: both Services, short and fully qualified, and every replica's
     * stable name under the headless Service.
     */
    public static List<String> dnsNames(KvIndexer kvi) {
        String ns = kvi.getMetadata().getNamespace();
        List<String> names = new ArrayList<>();
        for (String svc : List.of(IndexerNames.clientService(kvi), IndexerNames.headlessService(kvi))) {
            names.add(svc);
            names.add(svc + "." + ns);
            names.add(svc + "." + ns + ".svc");
            names.add(svc + "." + ns + ".svc.cluster.local");
        }
        names.add("*." + IndexerNames.headlessService(kvi) + "." + ns + ".svc");
        names.add("*." + IndexerNames.headlessService(kvi) + "." + ns + ".svc.cluster.local");
        return names;
    }

    /** The indexer flags that use the mounted Secrets. */
    public static List<String> args(KvIndexer kvi) {
        List<String> args = new ArrayList<>();
        if (tlsEnabled(kvi)) {
            args.addAll(List.of(
                    TLS_CERT_FLAG,
                    TLS_DIR + "/" + CERT_KEY,
                    "--tls-key-file",
                    TLS_DIR + "/" + KEY_KEY,
                    "--tls-ca-file",
                    TLS_DIR + "/" + CA_KEY));
        }
        if (authEnabled(kvi)) {
            args.addAll(List.of(AUTH_TOKEN_FLAG, AUTH_DIR + "/" + TOKEN_KEY));
        }
        return args;
    }

    public static List<Volume> volumes(KvIndexer kvi) {
        List<Volume> volumes = new ArrayList<>();
        if (tlsEnabled(kvi)) {
            volumes.add(secretVolume(TLS_VOLUME, tlsSecret(kvi)));
        }
        if (authEnabled(kvi)) {
            volumes.add(secretVolume(AUTH_VOLUME, tokenSecret(kvi)));
        }
        return volumes;
    }

    public static List<VolumeMount> mounts(KvIndexer kvi) {
        List<VolumeMount> mounts = new ArrayList<>();
        if (tlsEnabled(kvi)) {
            mounts.add(mount(TLS_VOLUME, TLS_DIR));
        }
        if (authEnabled(kvi)) {
            mounts.add(mount(AUTH_VOLUME, AUTH_DIR));
        }
        return mounts;
    }

    /** Read-only for the indexer's group (fsGroup), refreshed in place by the kubelet when the Secret changes. */
    static Volume secretVolume(String name, String secret) {
        return new VolumeBuilder()
                .withName(name)
                .withNewSecret()
                .withSecretName(secret)
                .withDefaultMode(0440)
                .endSecret()
                .build();
    }

    static VolumeMount mount(String volume, String path) {
        return new VolumeMountBuilder()
                .withName(volume)
                .withMountPath(path)
                .withReadOnly(true)
                .build();
    }
}

package io.kvindexer.operator.indexer;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.common.IndexerSecurity;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.Security;
import io.kvindexer.operator.reconcile.ReplicaAccesses;
import io.kvindexer.tls.PemFormat;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Keeps the Secrets a KvIndexer's pods mount, before the StatefulSet is written: {@code <name>-auth} (a random
 * 256-bit token, generated once, kept across reconciles; {@code kv-indexer-token} for a KvIndexer named
 * {@code kv-indexer}, see {@link IndexerSecurity#tokenSecret}) and {@code <name>-tls} (issued by the operator's CA, or a
 * cert-manager {@code Certificate} writes it). Both are owned by the KvIndexer; turning a feature off deletes what
 * the operator made for it (the token Secret once no pod mounts it any more). Returns a warning to show on the KvIndexer, or null.
 * When the operator's CA is renewed or replaced, {@code ca.crt} carries the former CA after the new one until every
 * replica serves a certificate of the new one ({@link CaBundle}).
 */
public final class SecuritySecrets {
    /** The operator's CA of one namespace (not owned: every KvIndexer of the namespace is issued by it). */
    public static final String CA_SECRET = "kv-indexer-ca";
    /** Who issued a {@code <name>-tls} Secret. */
    public static final String LABEL_ISSUER = "kvindexer.io/issuer";

    public static final String ISSUER_OPERATOR = "operator-ca";

    private static final SecureRandom RANDOM = new SecureRandom();

    private SecuritySecrets() {}

    public static String reconcile(KubernetesClient client, KvIndexer kvi, Instant now) {
        token(client, kvi);
        return tls(client, kvi, now);
    }

    private static void token(KubernetesClient client, KvIndexer kvi) {
        String ns = kvi.getMetadata().getNamespace();
        var secret = client.secrets().inNamespace(ns).withName(IndexerSecurity.tokenSecret(kvi));
        Secret current = secret.get();
        Secret former = formerToken(client, kvi);
        if (!IndexerSecurity.authEnabled(kvi)) {
            if (current != null && NameClaims.belongs(current, kvi)) {
                retire(client, kvi, current);
            }
            retire(client, kvi, former);
            return;
        }
        if (current == null || ReplicaAccesses.value(current, IndexerSecurity.TOKEN_KEY) == null) {
            // generated once; a user who writes a new token there rotates it. Moved from where an earlier version
            // kept it, the token stays the same: replicas not yet restarted and their callers keep working.
            String token = former == null ? null : ReplicaAccesses.value(former, IndexerSecurity.TOKEN_KEY);
            Secret desired = new SecretBuilder()
                    .withMetadata(owned(kvi, IndexerSecurity.tokenSecret(kvi), Map.of()))
                    .withType("Opaque")
                    .withData(Map.of(IndexerSecurity.TOKEN_KEY, b64(token == null ? newToken() : token)))
                    .build();
            client.secrets().inNamespace(ns).resource(desired).createOr(r -> r.update());
        }
        retire(client, kvi, former);
    }

    private static String newToken() {
        byte[] raw = new byte[32];
        RANDOM.nextBytes(raw);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(raw);
    }

    /** The token Secret an earlier version made for {@code kvi} under its former name, or null. */
    private static Secret formerToken(KubernetesClient client, KvIndexer kvi) {
        String name = IndexerSecurity.formerTokenSecret(kvi);
        if (name == null) {
            return null;
        }
        Secret s = client.secrets()
                .inNamespace(kvi.getMetadata().getNamespace())
                .withName(name)
                .get();
        return s != null && NameClaims.belongs(s, kvi) ? s : null; // the user's namespace-wide Secret is never touched
    }

    /**
     * Deletes a Secret the operator made (the former token Secret after the rename, the token Secret after auth was
     * turned off, the certificate's after TLS was) once neither the StatefulSet nor any replica pod mounts it: a pod of the old template that is
     * recreated during the rollout would otherwise wait for it forever in ContainerCreating and stop an
     * OrderedReady rollout. Until then it stays, and a later reconcile (a pod change, the resync) deletes it.
     */
    private static void retire(KubernetesClient client, KvIndexer kvi, Secret unused) {
        if (unused == null) {
            return;
        }
        String ns = kvi.getMetadata().getNamespace();
        String name = unused.getMetadata().getName();
        StatefulSet sts = client.apps()
                .statefulSets()
                .inNamespace(ns)
                .withName(IndexerNames.statefulSet(kvi))
                .get();
        if (sts != null && mounts(sts.getSpec().getTemplate().getSpec(), name)) {
            return;
        }
        List<Pod> pods = client.pods()
                .inNamespace(ns)
                .withLabels(IndexerNames.selectorLabels(kvi))
                .list()
                .getItems();
        if (pods.stream().noneMatch(p -> mounts(p.getSpec(), name))) {
            client.secrets().inNamespace(ns).withName(name).delete();
        }
    }

    private static boolean mounts(PodSpec pod, String secret) {
        return pod != null
                && pod.getVolumes() != null
                && pod.getVolumes().stream()
                        .anyMatch(v -> v.getSecret() != null
                                && secret.equals(v.getSecret().getSecretName()));
    }

    private static String tls(KubernetesClient client, KvIndexer kvi, Instant now) {
        String ns = kvi.getMetadata().getNamespace();
        var secret = client.secrets().inNamespace(ns).withName(IndexerSecurity.tlsSecret(kvi));
        boolean certManager = CertManager.installed(client);
        Security.IssuerRef issuer = IndexerSecurity.issuerRef(kvi);
        if (!IndexerSecurity.tlsEnabled(kvi)) {
            Secret current = secret.get();
            retire(client, kvi, current != null && NameClaims.belongs(current, kvi) ? current : null);
            if (certManager) {
                CertManager.delete(client, kvi);
            }
            return null;
        }
        String warning = issuer == null
                ? null
                : "spec.security.tls.issuerRef names " + issuer.name()
                        + ", but cert-manager's CRDs are not installed: the operator's CA issued the certificate";
        if (issuer != null && certManager) {
            try {
                CertManager.apply(client, kvi, issuer);
                return null;
            } catch (KubernetesClientException e) {
                if (e.getCode() != 403) {
                    throw e;
                }
                warning = "spec.security.tls.issuerRef names " + issuer.name() + ", but the operator may not write"
                        + " cert-manager Certificates (Helm value certManager.enabled): the operator's CA issued the"
                        + " certificate";
            }
        } else if (certManager) {
            CertManager.delete(client, kvi); // issuerRef removed: back to the operator's CA
        }
        OperatorCa ca = ca(client, ns, now);
        Secret current = secret.get();
        // the former CAs ca.crt carries (the one the Secret was issued by before, if the operator issued it)
        List<X509Certificate> formers = current != null && ISSUER_OPERATOR.equals(labelOf(current, LABEL_ISSUER))
                ? CaBundle.formers(ReplicaAccesses.value(current, IndexerSecurity.CA_KEY), ca, now)
                : List.of();
        if (current == null || needsNewCertificate(current, ca, now)) {
            // the new certificate and the bundle in one write: a pod's copy of the Secret changes at once, so a
            // replica never holds the new certificate beside a ca.crt without the CA of its peers' old ones
            OperatorCa.Pem leaf = ca.issue(IndexerSecurity.serviceDnsName(kvi), IndexerSecurity.dnsNames(kvi), now);
            Map<String, String> data = new LinkedHashMap<>();
            data.put(IndexerSecurity.CERT_KEY, b64(leaf.cert()));
            data.put(IndexerSecurity.KEY_KEY, b64(leaf.key()));
            data.put(IndexerSecurity.CA_KEY, b64(CaBundle.pem(ca, formers)));
            Secret desired = new SecretBuilder()
                    .withMetadata(owned(kvi, IndexerSecurity.tlsSecret(kvi), Map.of(LABEL_ISSUER, ISSUER_OPERATOR)))
                    .withType("kubernetes.io/tls")
                    .withData(data)
                    .build();
            client.secrets().inNamespace(ns).resource(desired).createOr(r -> r.update());
        } else {
            dropFormerCas(client, kvi, current, ca, formers);
        }
        return warning;
    }

    /**
     * Rewrites {@code ca.crt} with {@code ca} alone once every replica serves a certificate of it (or with the
     * former CAs still valid, when one expired meanwhile); unchanged otherwise.
     */
    private static void dropFormerCas(
            KubernetesClient client, KvIndexer kvi, Secret current, OperatorCa ca, List<X509Certificate> formers) {
        String name = current.getMetadata().getName();
        List<X509Certificate> keep =
                formers.isEmpty() || ServedCertificates.everyReplicaServes(client, kvi, name, ca) ? List.of() : formers;
        String caCrt = ReplicaAccesses.value(current, IndexerSecurity.CA_KEY);
        if (CaBundle.read(caCrt).size() == keep.size() + 1) {
            return;
        }
        Map<String, String> data = new LinkedHashMap<>(Objects.requireNonNullElse(current.getData(), Map.of()));
        data.put(IndexerSecurity.CA_KEY, b64(CaBundle.pem(ca, keep)));
        // an update of the Secret as read (its resourceVersion: a conflict retries the reconcile), not edit(), which
        // is a PATCH: the operator's RBAC grants Secrets no patch
        client.secrets()
                .inNamespace(kvi.getMetadata().getNamespace())
                .resource(new SecretBuilder(current).withData(data).build())
                .update();
    }

    private static String labelOf(Secret s, String label) {
        Map<String, String> labels = s.getMetadata().getLabels();
        return labels == null ? null : labels.get(label);
    }

    /** Missing, unreadable, from another CA, for other names, or within a third of its life from expiry. */
    private static boolean needsNewCertificate(Secret s, OperatorCa ca, Instant now) {
        String cert = ReplicaAccesses.value(s, IndexerSecurity.CERT_KEY);
        String caPem = ReplicaAccesses.value(s, IndexerSecurity.CA_KEY);
        if (cert == null || ReplicaAccesses.value(s, IndexerSecurity.KEY_KEY) == null || caPem == null) {
            return true;
        }
        List<X509Certificate> cas = CaBundle.read(caPem); // ca first, then the former ones it still carries
        if (cas.isEmpty() || !cas.getFirst().equals(ca.certificate())) {
            return true;
        }
        try {
            X509Certificate leaf = PemFormat.certificates(cert).getFirst();
            leaf.verify(ca.certificate().getPublicKey());
            return OperatorCa.dueForRenewal(leaf, now);
        } catch (GeneralSecurityException | RuntimeException e) {
            return true;
        }
    }

    /**
     * The namespace's CA: loaded, or made (and replaced when a third of its life is left). One the operator did not
     * make (no {@code app.kubernetes.io/managed-by} of ours) is never overwritten: used while it is a CA, refused
     * otherwise.
     */
    static OperatorCa ca(KubernetesClient client, String ns, Instant now) {
        var ref = client.secrets().inNamespace(ns).withName(CA_SECRET);
        Secret current = ref.get();
        if (current != null) {
            boolean ours = IndexerNames.MANAGED_BY.equals(labelOf(current, IndexerNames.LABEL_MANAGED_BY));
            try {
                OperatorCa ca = OperatorCa.load(new OperatorCa.Pem(
                        ReplicaAccesses.value(current, IndexerSecurity.CERT_KEY),
                        ReplicaAccesses.value(current, IndexerSecurity.KEY_KEY)));
                if (!ca.expiring(now) || !ours) {
                    return ca;
                }
            } catch (GeneralSecurityException | RuntimeException e) {
                // unreadable: replaced below, and every certificate it issued is issued again
                if (!ours) {
                    throw new IllegalStateException("Secret " + CA_SECRET + " of namespace " + ns + ", where the"
                            + " operator keeps the CA it issues certificates from, holds no CA it can read (tls.crt"
                            + " and a PKCS#8 tls.key) and was not made by the operator, which does not overwrite it:"
                            + " delete it, or give it a CA's tls.crt and tls.key");
                }
            }
        }
        OperatorCa ca = OperatorCa.create(ns, now);
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(IndexerNames.LABEL_PART_OF, IndexerNames.APP_NAME);
        labels.put(IndexerNames.LABEL_MANAGED_BY, IndexerNames.MANAGED_BY);
        Secret desired = new SecretBuilder()
                .withNewMetadata()
                .withName(CA_SECRET)
                .withNamespace(ns)
                .withLabels(labels)
                .endMetadata()
                .withType("kubernetes.io/tls")
                .withData(Map.of(
                        IndexerSecurity.CERT_KEY, b64(ca.pem().cert()),
                        IndexerSecurity.KEY_KEY, b64(ca.pem().key())))
                .build();
        try {
            if (current == null) {
                client.secrets().inNamespace(ns).resource(desired).create();
            } else {
                client.secrets().inNamespace(ns).resource(desired).update();
            }
        } catch (KubernetesClientException e) {
            if (e.getCode() == 409) { // another reconcile made it first: use that one
                return ca(client, ns, now);
            }
            throw e;
        }
        return ca;
    }

    static ObjectMeta owned(KvIndexer kvi, String name, Map<String, String> extraLabels) {
        ObjectMeta meta = IndexerDesiredState.meta(kvi, name);
        meta.getLabels().putAll(extraLabels);
        meta.setOwnerReferences(List.of(ownerReference(kvi)));
        return meta;
    }

    static OwnerReference ownerReference(KvIndexer kvi) {
        return new OwnerReferenceBuilder()
                .withApiVersion(kvi.getApiVersion())
                .withKind(kvi.getKind())
                .withName(kvi.getMetadata().getName())
                .withUid(kvi.getMetadata().getUid())
                .withController(true)
                .withBlockOwnerDeletion(true)
                .build();
    }

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    /** cert-manager's Certificate, as an untyped resource (no cert-manager model on the class path). */
    static final class CertManager {
        static final String GROUP = "cert-manager.io";
        static final String VERSION = "v1";

        private CertManager() {}

        static boolean installed(KubernetesClient client) {
            try {
                var resources = client.getApiResources(GROUP + "/" + VERSION);
                return resources != null
                        && resources.getResources().stream().anyMatch(r -> "certificates".equals(r.getName()));
            } catch (KubernetesClientException e) {
                return false;
            }
        }

        static GenericKubernetesResource desired(KvIndexer kvi, Security.IssuerRef issuer) {
            Map<String, Object> issuerRef = new LinkedHashMap<>();
            issuerRef.put("name", issuer.name());
            issuerRef.put("kind", issuer.kind() == null ? "Issuer" : issuer.kind());
            issuerRef.put("group", issuer.group() == null ? GROUP : issuer.group());
            Map<String, Object> spec = new LinkedHashMap<>();
            spec.put("secretName", IndexerSecurity.tlsSecret(kvi));
            spec.put("dnsNames", IndexerSecurity.dnsNames(kvi));
            spec.put("issuerRef", issuerRef);
            // PKCS#8: the encoding the indexer reads for every key algorithm
            spec.put(
                    "privateKey",
                    Map.of("algorithm", "ECDSA", "size", 256, "encoding", "PKCS8", "rotationPolicy", "Always"));
            spec.put("usages", List.of("server auth", "digital signature", "key encipherment"));
            return new GenericKubernetesResourceBuilder()
                    .withApiVersion(GROUP + "/" + VERSION)
                    .withKind("Certificate")
                    .withMetadata(owned(kvi, IndexerNames.statefulSet(kvi), Map.of()))
                    .withAdditionalProperties(Map.of("spec", spec))
                    .build();
        }

        static void apply(KubernetesClient client, KvIndexer kvi, Security.IssuerRef issuer) {
            GenericKubernetesResource desired = desired(kvi, issuer);
            client.genericKubernetesResources(GROUP + "/" + VERSION, "Certificate")
                    .inNamespace(kvi.getMetadata().getNamespace())
                    .resource(desired)
                    .createOr(r -> r.update());
        }

        /** Deletes the KvIndexer's Certificate if the operator made one (not granted Certificates: it made none). */
        static void delete(KubernetesClient client, KvIndexer kvi) {
            var ref = client.genericKubernetesResources(GROUP + "/" + VERSION, "Certificate")
                    .inNamespace(kvi.getMetadata().getNamespace())
                    .withName(IndexerNames.statefulSet(kvi));
            try {
                GenericKubernetesResource current = ref.get();
                if (current != null && NameClaims.belongs(current, kvi)) {
                    ref.delete();
                }
            } catch (KubernetesClientException e) {
                if (e.getCode() != 403) {
                    throw e;
                }
            }
        }
    }
}

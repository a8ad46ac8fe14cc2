package io.kvindexer.operator.indexer;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.kvindexer.operator.common.CreationOrder;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.common.IndexerSecurity;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * The objects a KvIndexer's reconcile writes are named after it, so one of those names may already be taken: by
 * another KvIndexer's object, or by one a user made. The operator never overwrites such an object: the KvIndexer is
 * refused before anything is written. An object is a KvIndexer's when an ownerReference names it (the same name: an
 * earlier KvIndexer of the name's, which goes with it, is this one's too); a certificate Secret also when cert-manager
 * wrote it for the KvIndexer's Certificate. Without this the Secrets were overwritten (written with create-or-update)
 * and the other objects' creates failed every reconcile with AlreadyExists after the rest had been written.
 *
 * <p>Services are also claimed across KvIndexers: {@code x} and {@code x-peers} both need a Service {@code x-peers}
 * (the client Service of one, the headless Service of the other). One Service cannot be both: the KvIndexer it
 * already belongs to keeps it (with none, the one created first). Otherwise the other's StatefulSet would govern its
 * pods by, and its replicas recover from, a Service that selects the first one's pods. No other name of a KvIndexer's
 * objects can be another's: the StatefulSet, PDB, HPA, NetworkPolicy, ServiceMonitor and Certificate are named as the
 * KvIndexer (one of a kind per name), and the Secrets end in {@code -auth} or {@code -tls} after the whole name.
 */
final class NameClaims {
    /** What cert-manager writes on a Secret it issues: the Certificate's name. */
    static final String CERT_MANAGER_CERTIFICATE = "cert-manager.io/certificate-name";

    static final ResourceDefinitionContext CERTIFICATE = new ResourceDefinitionContext.Builder()
            .withGroup(SecuritySecrets.CertManager.GROUP)
            .withVersion(SecuritySecrets.CertManager.VERSION)
            .withKind("Certificate")
            .withPlural("certificates")
            .withNamespaced(true)
            .build();

    private NameClaims() {}

    /** One object the reconcile writes: its type, its name, and what it is to the KvIndexer. */
    record Claim(ResourceDefinitionContext type, String name, String role) {
        String kind() {
            return type.getKind();
        }
    }

    /** What this reconcile of {@code kvi} writes by a name of its own (what the spec turns off is not written). */
    static List<Claim> claims(KvIndexer kvi) {
        String name = kvi.getMetadata().getName();
        List<Claim> claims = new ArrayList<>();
        claims.add(claim(Service.class, IndexerNames.clientService(kvi), "client Service"));
        claims.add(claim(Service.class, IndexerNames.headlessService(kvi), "headless (peer DNS) Service"));
        claims.add(claim(StatefulSet.class, IndexerNames.statefulSet(kvi), "StatefulSet"));
        if (IndexerConditions.moreThanOneReplica(kvi)) {
            claims.add(claim(PodDisruptionBudget.class, IndexerNames.pdb(kvi), "PodDisruptionBudget"));
        }
        if (IndexerSecurity.networkPolicyEnabled(kvi)) {
            claims.add(claim(NetworkPolicy.class, name, "NetworkPolicy"));
        }
        if (kvi.getSpec().getAutoscaling() != null) {
            claims.add(claim(HorizontalPodAutoscaler.class, IndexerNames.hpa(kvi), "HorizontalPodAutoscaler"));
        }
        if (ServiceMonitors.wanted(kvi)) {
            claims.add(claim(ServiceMonitor.class, name, "ServiceMonitor"));
        }
        if (IndexerSecurity.authEnabled(kvi)) {
            claims.add(claim(Secret.class, IndexerSecurity.tokenSecret(kvi), "token Secret"));
        }
        if (IndexerSecurity.tlsEnabled(kvi)) {
            claims.add(claim(Secret.class, IndexerSecurity.tlsSecret(kvi), "certificate Secret"));
            if (IndexerSecurity.issuerRef(kvi) != null) {
                claims.add(new Claim(CERTIFICATE, IndexerNames.statefulSet(kvi), "cert-manager Certificate"));
            }
        }
        return claims;
    }

    private static Claim claim(Class<? extends HasMetadata> type, String name, String role) {
        return new Claim(ResourceDefinitionContext.fromResourceType(type), name, role);
    }

    /**
     * Why {@code kvi} may not have one of its objects, or null.
     *
     * @param existing  the object of a claim in {@code kvi}'s namespace, or null
     * @param indexers  the KvIndexers the operator knows ({@code kvi} among them)
     */
    static String problem(KvIndexer kvi, Function<Claim, HasMetadata> existing, Collection<KvIndexer> indexers) {
        // each object read once: the Certificate is a claim and the certificate Secret's issuer too
        Map<String, Optional<HasMetadata>> read = new HashMap<>();
        Function<Claim, HasMetadata> once = claim -> read.computeIfAbsent(
                        claim.kind() + "/" + claim.name(), k -> Optional.ofNullable(existing.apply(claim)))
                .orElse(null);
        for (Claim claim : claims(kvi)) {
            HasMetadata object = once.apply(claim);
            if (object != null) {
                String problem = foreign(kvi, claim, object, once);
                if (problem != null) {
                    return problem;
                }
            } else if (claim.type().getKind().equals("Service")) {
                String problem = claimedFirst(kvi, claim.name(), indexers);
                if (problem != null) {
                    return problem + ": create this KvIndexer again under another name";
                }
            }
        }
        return null;
    }

    /** The KvIndexer an ownerReference of {@code object} names, if any. */
    static Optional<String> owner(HasMetadata object) {
        return object.getMetadata().getOwnerReferences().stream()
                .filter(o -> HasMetadata.getKind(KvIndexer.class).equals(o.getKind()))
                .map(OwnerReference::getName)
                .findFirst();
    }

    /** Whether {@code object} is {@code kvi}'s by its ownerReference. */
    static boolean belongs(HasMetadata object, KvIndexer kvi) {
        return owner(object).filter(kvi.getMetadata().getName()::equals).isPresent();
    }

    /** What is wrong with {@code object} of one of {@code kvi}'s claims, or null when it is kvi's. */
    private static String foreign(
            KvIndexer kvi, Claim claim, HasMetadata object, Function<Claim, HasMetadata> existing) {
        if (belongs(object, kvi) || issuedForCertificate(kvi, claim, object, existing)) {
            return null;
        }
        Optional<String> owner = owner(object);
        if (owner.isPresent()) {
            String what = claim.kind().equals("Service")
                    ? "the " + roleOf(owner.get(), claim.name()) + " Service of KvIndexer " + owner.get()
                    : "KvIndexer " + owner.get() + "'s";
            return claim.kind() + " " + claim.name() + " is " + what + ", and this KvIndexer's " + claim.role()
                    + " would have the same name: create this KvIndexer again under another name";
        }
        String hint = claim.role().equals("certificate Secret")
                ? " (to serve a certificate of your own, name its cert-manager issuer in"
                        + " spec.security.tls.issuerRef once this one is gone: cert-manager then writes the Secret)"
                : "";
        return claim.kind() + " " + claim.name() + ", which this KvIndexer's " + claim.role()
                + " would be, exists and belongs to no KvIndexer; the operator does not overwrite it: delete it"
                + hint + ", or create this KvIndexer again under another name";
    }

    /**
     * A certificate Secret cert-manager wrote for the Certificate the operator makes for {@code kvi}: its own unless
     * a Certificate of that name is another's.
     */
    private static boolean issuedForCertificate(
            KvIndexer kvi, Claim claim, HasMetadata object, Function<Claim, HasMetadata> existing) {
        Map<String, String> annotations = object.getMetadata().getAnnotations();
        String certificate = IndexerNames.statefulSet(kvi);
        if (!claim.role().equals("certificate Secret")
                || annotations == null
                || !certificate.equals(annotations.get(CERT_MANAGER_CERTIFICATE))) {
            return false;
        }
        HasMetadata issuing = existing.apply(new Claim(CERTIFICATE, certificate, "cert-manager Certificate"));
        return issuing == null || belongs(issuing, kvi);
    }

    /** Whether another KvIndexer created before {@code kvi} needs Service {@code name} too (none has it yet). */
    private static String claimedFirst(KvIndexer kvi, String name, Collection<KvIndexer> indexers) {
        return indexers.stream()
                .filter(o -> Objects.equals(
                                o.getMetadata().getNamespace(),
                                kvi.getMetadata().getNamespace())
                        && !o.getMetadata().getName().equals(kvi.getMetadata().getName())
                        && o.getMetadata().getDeletionTimestamp() == null
                        && CreationOrder.OLDEST_FIRST.compare(o, kvi) < 0
                        && (name.equals(IndexerNames.clientService(o)) || name.equals(IndexerNames.headlessService(o))))
                .findFirst()
                .map(o -> "KvIndexer " + o.getMetadata().getName() + ", created first, needs Service " + name
                        + " as its " + role(o, name) + " Service, and this KvIndexer's "
                        + role(kvi, name) + " Service would have the same name")
                .orElse(null);
    }

    private static String role(KvIndexer kvi, String service) {
        return roleOf(kvi.getMetadata().getName(), service);
    }

    private static String roleOf(String indexer, String service) {
        return service.equals(indexer) ? "client" : "headless (peer DNS)";
    }
}

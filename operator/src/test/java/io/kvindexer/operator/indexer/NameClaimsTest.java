package io.kvindexer.operator.indexer;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.Security;
import io.kvindexer.operator.support.Resources;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * Who keeps a Service name two KvIndexers need ({@code x}'s headless, {@code x-peers}' client Service), and that no
 * object of one of a KvIndexer's names that is not its own is written.
 */
class NameClaimsTest {
    private static final String NS = "ns";

    private static KvIndexer indexer(String name, String uid, String created) {
        KvIndexer kvi = Resources.kvIndexer(NS, name, 1, 8090);
        kvi.getMetadata().setUid(uid);
        kvi.getMetadata().setCreationTimestamp(created);
        return kvi;
    }

    private static Service ownedBy(String name, KvIndexer owner) {
        Service s = new ServiceBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(NS)
                .endMetadata()
                .build();
        if (owner != null) {
            s.addOwnerReference(owner);
        }
        return s;
    }

    /** Looks a claim up among {@code objects} by kind and name. */
    private static Function<NameClaims.Claim, HasMetadata> lookup(HasMetadata... objects) {
        return c -> Arrays.stream(objects)
                .filter(o -> o.getKind().equals(c.kind())
                        && o.getMetadata().getName().equals(c.name()))
                .findFirst()
                .orElse(null);
    }

    @Test
    void withNoServiceYetTheKvIndexerCreatedFirstKeepsTheName() {
        KvIndexer x = indexer("x", "1", "2026-01-01T00:00:05Z");
        KvIndexer peers = indexer("x-peers", "2", "2026-01-01T00:00:04Z");
        List<KvIndexer> both = List.of(x, peers);

        assertThat(NameClaims.problem(x, c -> null, both))
                .isEqualTo("KvIndexer x-peers, created first, needs Service x-peers as its client Service, and this"
                        + " KvIndexer's headless (peer DNS) Service would have the same name: create this KvIndexer"
                        + " again under another name");
        assertThat(NameClaims.problem(peers, c -> null, both)).isNull();
        // within one second, by name
        peers.getMetadata().setCreationTimestamp(x.getMetadata().getCreationTimestamp());
        assertThat(NameClaims.problem(x, c -> null, both)).isNull();
        assertThat(NameClaims.problem(peers, c -> null, both)).contains("KvIndexer x, created first");
        // one being deleted claims nothing
        x.getMetadata().setDeletionTimestamp("2026-01-01T00:01:00Z");
        assertThat(NameClaims.problem(peers, c -> null, both)).isNull();
    }

    @Test
    void anExistingServiceBelongsToItsOwnerWhoeverCameFirst() {
        KvIndexer x = indexer("x", "1", "2026-01-01T00:00:05Z");
        KvIndexer peers = indexer("x-peers", "2", "2026-01-01T00:00:04Z");
        var services = lookup(ownedBy("x", x), ownedBy("x-peers", x));

        assertThat(NameClaims.problem(x, services, List.of(x, peers))).isNull();
        assertThat(NameClaims.problem(peers, services, List.of(x, peers)))
                .startsWith("Service x-peers is the headless (peer DNS) Service of KvIndexer x, and this KvIndexer's"
                        + " client Service would have the same name");
    }

    @Test
    void aServiceOfNoKvIndexerIsNotTakenOverButOneOfAnEarlierKvIndexerOfTheNameIs() {
        KvIndexer x = indexer("x", "1", "2026-01-01T00:00:05Z");
        assertThat(NameClaims.problem(x, lookup(ownedBy("x", null)), List.of(x)))
                .startsWith("Service x, which this KvIndexer's client Service would be, exists and belongs to no"
                        + " KvIndexer");
        // deleted and created again: the garbage collector takes the old one's, or the workflow updates it
        KvIndexer before = indexer("x", "0", "2026-01-01T00:00:01Z");
        assertThat(NameClaims.problem(x, lookup(ownedBy("x", before), ownedBy("x-peers", before)), List.of(x)))
                .isNull();
    }

    private static Secret secret(String name, KvIndexer owner, Map<String, String> annotations) {
        Secret s = new SecretBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(NS)
                .withAnnotations(annotations)
                .endMetadata()
                .withStringData(Map.of("tls.crt", "the user's"))
                .build();
        if (owner != null) {
            s.addOwnerReference(owner);
        }
        return s;
    }

    @Test
    void aSecretOfOneOfItsNamesThatIsNotItsOwnIsRefusedAndNamed() {
        KvIndexer x = indexer("x", "1", "2026-01-01T00:00:05Z");
        assertThat(NameClaims.problem(x, lookup(secret("x-tls", null, Map.of())), List.of(x)))
                .isEqualTo("Secret x-tls, which this KvIndexer's certificate Secret would be, exists and belongs to no"
                        + " KvIndexer; the operator does not overwrite it: delete it (to serve a certificate of your"
                        + " own, name its cert-manager issuer in spec.security.tls.issuerRef once this one is gone:"
                        + " cert-manager then writes the Secret), or create this KvIndexer again under another name");
        assertThat(NameClaims.problem(x, lookup(secret("x-auth", null, Map.of())), List.of(x)))
                .startsWith("Secret x-auth, which this KvIndexer's token Secret would be, exists and belongs to no"
                        + " KvIndexer");
        assertThat(NameClaims.problem(
                        x, lookup(secret("x-tls", x, Map.of()), secret("x-auth", x, Map.of())), List.of(x)))
                .isNull();
        // what the spec turns off is not written, so not claimed
        x.getSpec().setSecurity(new Security(new Security.Tls(false, null), new Security.Auth(false)));
        assertThat(NameClaims.problem(
                        x, lookup(secret("x-tls", null, Map.of()), secret("x-auth", null, Map.of())), List.of(x)))
                .isNull();
    }

    @Test
    void theOtherObjectsOfItsNamesAreClaimedWhileTheSpecWantsThem() {
        KvIndexer x = indexer("x", "1", "2026-01-01T00:00:05Z");
        var theUsers = lookup(
                new StatefulSetBuilder()
                        .withNewMetadata()
                        .withName("x")
                        .endMetadata()
                        .build(),
                new PodDisruptionBudgetBuilder()
                        .withNewMetadata()
                        .withName("x")
                        .endMetadata()
                        .build());
        assertThat(NameClaims.problem(x, theUsers, List.of(x)))
                .startsWith("StatefulSet x, which this KvIndexer's StatefulSet would be, exists and belongs to no"
                        + " KvIndexer");
        var pdbOnly = lookup(new PodDisruptionBudgetBuilder()
                .withNewMetadata()
                .withName("x")
                .endMetadata()
                .build());
        assertThat(NameClaims.problem(x, pdbOnly, List.of(x)))
                .as("one replica: no PDB")
                .isNull();
        x.getSpec().setReplicas(2);
        assertThat(NameClaims.problem(x, pdbOnly, List.of(x)))
                .startsWith("PodDisruptionBudget x, which this KvIndexer's PodDisruptionBudget would be");
    }

    @Test
    void aCertificateSecretCertManagerWroteForItsCertificateIsItsOwn() {
        KvIndexer x = indexer("x", "1", "2026-01-01T00:00:05Z");
        Secret issued = secret("x-tls", null, Map.of(NameClaims.CERT_MANAGER_CERTIFICATE, "x"));
        assertThat(NameClaims.problem(x, lookup(issued), List.of(x))).isNull();
        assertThat(NameClaims.problem(
                        x,
                        lookup(secret("x-tls", null, Map.of(NameClaims.CERT_MANAGER_CERTIFICATE, "mine"))),
                        List.of(x)))
                .startsWith("Secret x-tls, which");
        // the user's own Certificate x wrote it: theirs
        var usersCertificate = new GenericKubernetesResourceBuilder()
                .withApiVersion("cert-manager.io/v1")
                .withKind("Certificate")
                .withNewMetadata()
                .withName("x")
                .endMetadata()
                .build();
        assertThat(NameClaims.problem(x, lookup(issued, usersCertificate), List.of(x)))
                .startsWith("Secret x-tls, which");
        x.getSpec().setSecurity(new Security(new Security.Tls(null, new Security.IssuerRef("ca", null, null)), null));
        assertThat(NameClaims.problem(x, lookup(usersCertificate), List.of(x)))
                .startsWith("Certificate x, which this KvIndexer's cert-manager Certificate would be, exists and"
                        + " belongs to no KvIndexer");
    }
}

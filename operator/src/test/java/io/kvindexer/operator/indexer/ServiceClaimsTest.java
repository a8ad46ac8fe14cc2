package io.kvindexer.operator.indexer;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.support.Resources;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Who keeps a Service name two KvIndexers need ({@code x}'s headless, {@code x-peers}' client Service). */
class ServiceClaimsTest {
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

    @Test
    void withNoServiceYetTheKvIndexerCreatedFirstKeepsTheName() {
        KvIndexer x = indexer("x", "1", "2026-01-01T00:00:05Z");
        KvIndexer peers = indexer("x-peers", "2", "2026-01-01T00:00:04Z");
        List<KvIndexer> both = List.of(x, peers);

        assertThat(ServiceClaims.problem(x, n -> null, both))
                .isEqualTo("KvIndexer x-peers, created first, needs Service x-peers as its client Service, and this"
                        + " KvIndexer's headless (peer DNS) Service would have the same name: create this KvIndexer"
                        + " again under another name");
        assertThat(ServiceClaims.problem(peers, n -> null, both)).isNull();
        // within one second, by name
        peers.getMetadata().setCreationTimestamp(x.getMetadata().getCreationTimestamp());
        assertThat(ServiceClaims.problem(x, n -> null, both)).isNull();
        assertThat(ServiceClaims.problem(peers, n -> null, both)).contains("KvIndexer x, created first");
        // one being deleted claims nothing
        x.getMetadata().setDeletionTimestamp("2026-01-01T00:01:00Z");
        assertThat(ServiceClaims.problem(peers, n -> null, both)).isNull();
    }

    @Test
    void anExistingServiceBelongsToItsOwnerWhoeverCameFirst() {
        KvIndexer x = indexer("x", "1", "2026-01-01T00:00:05Z");
        KvIndexer peers = indexer("x-peers", "2", "2026-01-01T00:00:04Z");
        Map<String, Service> services = Map.of("x", ownedBy("x", x), "x-peers", ownedBy("x-peers", x));

        assertThat(ServiceClaims.problem(x, services::get, List.of(x, peers))).isNull();
        assertThat(ServiceClaims.problem(peers, services::get, List.of(x, peers)))
                .startsWith("Service x-peers is the headless (peer DNS) Service of KvIndexer x, and this KvIndexer's"
                        + " client Service would have the same name");
    }

    @Test
    void aServiceOfNoKvIndexerIsNotTakenOverButOneOfAnEarlierKvIndexerOfTheNameIs() {
        KvIndexer x = indexer("x", "1", "2026-01-01T00:00:05Z");
        assertThat(ServiceClaims.problem(x, n -> n.equals("x") ? ownedBy("x", null) : null, List.of(x)))
                .startsWith("Service x, which this KvIndexer's client Service would be, exists and belongs to no"
                        + " KvIndexer");
        // deleted and created again: the garbage collector takes the old one's, or the workflow updates it
        KvIndexer before = indexer("x", "0", "2026-01-01T00:00:01Z");
        assertThat(ServiceClaims.problem(x, n -> ownedBy(n, before), List.of(x)))
                .isNull();
    }
}

package io.kvindexer.operator.indexer;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.kvindexer.operator.support.Resources;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A claim the API server will not grow (its StorageClass does not allow expansion, or the operator may not patch
 * claims) is named with the server's reason, and the claims that did grow are not: the mock answers as the API
 * server does. Each test names its own KvIndexer: the mock's expectations outlive a test.
 */
@EnableKubernetesMockClient
class StateVolumeGrowTest {
    static KubernetesMockServer server;
    static KubernetesClient client;

    private static final String CLAIMS = "/api/v1/namespaces/ns/persistentvolumeclaims/";
    private static final String REFUSAL = "only dynamically provisioned pvc can be resized and the storageclass that"
            + " provisions the pvc must support resize";

    @Test
    void aClaimThatCannotGrowIsNamedWithTheServersReason() {
        for (String name : new String[] {"state-kv-0", "state-kv-1"}) {
            server.expect()
                    .get()
                    .withPath(CLAIMS + name)
                    .andReturn(200, claim(name, "1Gi"))
                    .always();
        }
        server.expect()
                .patch()
                .withPath(CLAIMS + "state-kv-0")
                .andReturn(200, claim("state-kv-0", "3Gi"))
                .once();
        server.expect()
                .patch()
                .withPath(CLAIMS + "state-kv-1")
                .andReturn(
                        422,
                        new StatusBuilder()
                                .withCode(422)
                                .withReason("Invalid")
                                .withMessage(REFUSAL)
                                .build())
                .once();

        String message = StateVolume.growClaims(
                client, Resources.kvIndexer("ns", "kv", 2, 8090), statefulSet(2), new Quantity("3Gi"));

        assertThat(message)
                .startsWith("spec.persistence (3Gi) is not applied: state-kv-1 (" + REFUSAL + ") could not grow")
                .doesNotContain("state-kv-0")
                .contains("allowVolumeExpansion: true");
    }

    @Test
    void claimsThatAskForTheSizeAlreadyOrDoNotExistYetAreLeftAlone() throws InterruptedException {
        server.expect()
                .get()
                .withPath(CLAIMS + "state-kept-0")
                .andReturn(200, claim("state-kept-0", "4Gi"))
                .always();
        server.expect()
                .get()
                .withPath(CLAIMS + "state-kept-1")
                .andReturn(404, null)
                .always();

        assertThat(StateVolume.growClaims(
                        client, Resources.kvIndexer("ns", "kept", 2, 8090), statefulSet(2), new Quantity("3Gi")))
                .isNull();
        assertThat(server.getLastRequest().getMethod()).as("no patch sent").isEqualTo("GET");
    }

    /** The replicas' StatefulSet: what the claims are counted from. */
    private static StatefulSet statefulSet(int replicas) {
        return new StatefulSetBuilder()
                .withNewSpec()
                .withReplicas(replicas)
                .endSpec()
                .build();
    }

    private static io.fabric8.kubernetes.api.model.PersistentVolumeClaim claim(String name, String size) {
        return new PersistentVolumeClaimBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace("ns")
                .endMetadata()
                .withNewSpec()
                .withNewResources()
                .withRequests(Map.of("storage", new Quantity(size)))
                .endResources()
                .endSpec()
                .build();
    }
}

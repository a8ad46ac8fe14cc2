package io.kvindexer.operator.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.time.Duration;
import java.util.HashMap;
import org.junit.jupiter.api.Test;

/** The mock API server answers a JSON patch that does not apply with 422, as the API server does, and in time. */
class ApiServerDispatcherTest {
    @Test
    void aJsonPatchThatDoesNotApplyIs422NotASilence() {
        KubernetesMockServer server = new KubernetesMockServer(
                new Context(), new MockWebServer(), new HashMap<>(), new ApiServerDispatcher(), false);
        server.init();
        try (KubernetesClient client = server.createClient()) {
            client.configMaps()
                    .inNamespace("ns")
                    .resource(new ConfigMapBuilder()
                            .withNewMetadata()
                            .withName("cm")
                            .withNamespace("ns")
                            .withFinalizers("kvindexer.io/one")
                            .endMetadata()
                            .build())
                    .create();
            // without an answer the client waits 10 s, then sends it again
            KubernetesClientException e = assertTimeoutPreemptively(
                    Duration.ofSeconds(8),
                    () -> catchThrowableOfType(
                            KubernetesClientException.class,
                            () -> client.configMaps()
                                    .inNamespace("ns")
                                    .withName("cm")
                                    .patch(
                                            PatchContext.of(PatchType.JSON),
                                            "[{\"op\":\"remove\",\"path\":\"/metadata/finalizers/3\"}]")));
            assertThat(e).isNotNull();
            assertThat(e.getCode()).isEqualTo(422);
            assertThat(e.getMessage()).contains("does not apply");
            assertThat(client.configMaps()
                            .inNamespace("ns")
                            .withName("cm")
                            .get()
                            .getMetadata()
                            .getFinalizers())
                    .containsExactly("kvindexer.io/one");
        } finally {
            server.destroy();
        }
    }
}

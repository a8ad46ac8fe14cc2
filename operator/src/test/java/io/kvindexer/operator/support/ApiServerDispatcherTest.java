package io.kvindexer.operator.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
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

/**
 * The mock API server answers as the API server does where the fabric8 mock alone would not: a JSON patch that does
 * not apply with 422, in time; a status written over an object that changed since it was read with 409.
 */
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

    @Test
    void aStatusWrittenOverAChangedObjectIs409() {
        KubernetesMockServer server = new KubernetesMockServer(
                new Context(), new MockWebServer(), new HashMap<>(), new ApiServerDispatcher(), false);
        server.init();
        try (KubernetesClient client = server.createClient()) {
            Pod read = client.pods()
                    .inNamespace("ns")
                    .resource(new PodBuilder()
                            .withNewMetadata()
                            .withName("p")
                            .withNamespace("ns")
                            .endMetadata()
                            .build())
                    .create();
            // someone edits the object after the writer read it (a user's kubectl edit of the spec)
            client.pods()
                    .inNamespace("ns")
                    .withName("p")
                    .edit(p -> new PodBuilder(p)
                            .editMetadata()
                            .addToLabels("edited", "yes")
                            .endMetadata()
                            .build());

            Pod stale = new PodBuilder(read)
                    .withNewStatus()
                    .withPhase("Running")
                    .endStatus()
                    .build();
            KubernetesClientException e = catchThrowableOfType(
                    KubernetesClientException.class,
                    () -> client.pods().inNamespace("ns").resource(stale).updateStatus());
            assertThat(e).isNotNull();
            assertThat(e.getCode()).isEqualTo(409);
            assertThat(client.pods().inNamespace("ns").withName("p").get().getStatus())
                    .as("the refused status is not written")
                    .satisfiesAnyOf(
                            s -> assertThat(s).isNull(),
                            s -> assertThat(s.getPhase()).isNull());

            // read again, the write goes through, and the edit stays
            Pod fresh = client.pods().inNamespace("ns").withName("p").get();
            client.pods()
                    .inNamespace("ns")
                    .resource(new PodBuilder(fresh)
                            .withNewStatus()
                            .withPhase("Running")
                            .endStatus()
                            .build())
                    .updateStatus();
            Pod after = client.pods().inNamespace("ns").withName("p").get();
            assertThat(after.getStatus().getPhase()).isEqualTo("Running");
            assertThat(after.getMetadata().getLabels()).containsEntry("edited", "yes");
        } finally {
            server.destroy();
        }
    }
}

package io.kvindexer.operator;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.javaoperatorsdk.operator.Operator;
import io.kvindexer.operator.support.OperatorHarness;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The one shutdown path: steps in order, each to its end, a failing one does not skip the rest. */
@EnableKubernetesMockClient(crud = true)
class ShutdownSequenceTest {
    static KubernetesClient client;
    static KubernetesMockServer server;

    @Test
    void stepsRunInOrderAndAFailureDoesNotSkipTheRest() {
        List<String> ran = new CopyOnWriteArrayList<>();
        new ShutdownSequence()
                .then("operator", () -> {
                    ran.add("operator");
                    throw new IllegalStateException("stuck");
                })
                .then("probes", () -> ran.add("probes"))
                .then("client", () -> ran.add("client"))
                .run();
        assertThat(ran).containsExactly("operator", "probes", "client");
    }

    /** A running operator on the mock: stopped first, then its client closed, with no error between. */
    @Test
    void theOperatorIsStoppedBeforeItsClientCloses() {
        KubernetesClient own = server.createClient();
        OperatorHarness.installCrds(own);
        Operator operator = OperatorSettings.defaults()
                .createOperator(own, new PrometheusRegistry())
                .operator();
        operator.start();
        List<String> seen = new CopyOnWriteArrayList<>();
        new ShutdownSequence()
                .then("operator", () -> {
                    operator.stop();
                    seen.add("operator stopped, started="
                            + operator.getRuntimeInfo().isStarted());
                })
                .then("client", () -> {
                    seen.add("client open=" + !own.getHttpClient().isClosed());
                    own.close();
                })
                .run();
        assertThat(seen).containsExactly("operator stopped, started=false", "client open=true");
        assertThat(own.getHttpClient().isClosed()).isTrue();
    }
}

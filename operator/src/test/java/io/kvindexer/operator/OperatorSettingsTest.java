package io.kvindexer.operator;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.javaoperatorsdk.operator.api.config.BaseConfigurationService;
import io.javaoperatorsdk.operator.api.config.ConfigurationService;
import io.kvindexer.operator.observability.OperatorMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;

/** The settings main and the tests share: SSA off, leader election only when asked for. */
@EnableKubernetesMockClient(crud = true)
class OperatorSettingsTest {
    static KubernetesClient client;

    private ConfigurationService configured(OperatorSettings settings) {
        return ConfigurationService.newOverriddenConfigurationService(
                new BaseConfigurationService(),
                settings.overrider(
                        client,
                        new OperatorMetrics(new PrometheusRegistry()),
                        Executors.newVirtualThreadPerTaskExecutor()));
    }

    @Test
    void serverSideApplyIsOffAndLeaderElectionFollowsTheSettings() {
        ConfigurationService plain = configured(OperatorSettings.defaults());
        assertThat(plain.useSSAToPatchPrimaryResource()).isFalse();
        assertThat(plain.ssaBasedCreateUpdateMatchForDependentResources()).isFalse();
        assertThat(plain.getLeaderElectionConfiguration()).isEmpty();
        assertThat(plain.getKubernetesClient()).isSameAs(client);

        ConfigurationService elected = configured(
                OperatorSettings.defaults().withLeaderElection("ops", "pod-a").withResync(Duration.ofSeconds(7)));
        assertThat(elected.getLeaderElectionConfiguration()).hasValueSatisfying(le -> {
            assertThat(le.getLeaseName()).isEqualTo(OperatorSettings.LEASE_NAME);
            assertThat(le.getLeaseNamespace()).contains("ops");
            assertThat(le.getIdentity()).contains("pod-a");
        });
    }
}

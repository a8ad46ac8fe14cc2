package io.kvindexer.operator.common;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.Security;
import io.kvindexer.operator.support.Resources;
import org.junit.jupiter.api.Test;

/** What a pod made from each template says about how it serves: the template's flags and Secrets, read back. */
class ServedAsTest {

    /** A pod as the StatefulSet controller makes it from the operator's template for {@code kvi}. */
    private static Pod podOf(KvIndexer kvi) {
        var template = io.kvindexer.operator.indexer.IndexerDesiredState.statefulSet(kvi)
                .getSpec()
                .getTemplate();
        return new PodBuilder()
                .withMetadata(template.getMetadata())
                .withSpec(template.getSpec())
                .build();
    }

    private static KvIndexer kvi(Boolean tls, Boolean auth) {
        KvIndexer kvi = Resources.kvIndexer("ns", "kv", 2, 8090);
        kvi.getSpec().setSecurity(new Security(new Security.Tls(tls, null), new Security.Auth(auth)));
        return kvi;
    }

    @Test
    void aSecuredPodServesHttpsWithTheTokenOfTheSecretsItMounts() {
        assertThat(ServedAs.of(podOf(kvi(null, null)))).isEqualTo(new ServedAs(true, "kv-tls", true, "kv-auth"));
    }

    @Test
    void eachFeatureOffIsReadBackOff() {
        assertThat(ServedAs.of(podOf(kvi(false, null)))).isEqualTo(new ServedAs(false, null, true, "kv-auth"));
        assertThat(ServedAs.of(podOf(kvi(null, false)))).isEqualTo(new ServedAs(true, "kv-tls", false, null));
        assertThat(ServedAs.of(podOf(kvi(false, false))).scheme()).isEqualTo("http");
    }

    @Test
    void aPodWithoutTheIndexerContainerDoesNotSay() {
        Pod other = new PodBuilder()
                .withNewSpec()
                .addNewContainer()
                .withName("main")
                .withArgs("--tls-cert-file", "x")
                .endContainer()
                .endSpec()
                .build();
        assertThat(ServedAs.of(other)).isNull();
        assertThat(ServedAs.of(new Pod())).isNull();
    }
}

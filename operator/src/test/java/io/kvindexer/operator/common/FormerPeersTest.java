package io.kvindexer.operator.common;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.Security;
import io.kvindexer.operator.indexer.IndexerDesiredState;
import io.kvindexer.operator.support.Resources;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * What the pod template adds while a change of {@code spec.security} rolls, for each change, from the pods made from
 * the template before it; and that a pod made from the template with it does not read back as serving the former
 * way, so the addition leaves once the old pods are gone (a second rollout) instead of staying for good.
 */
class FormerPeersTest {

    private static KvIndexer kvi(Boolean tls, Boolean auth) {
        KvIndexer kvi = Resources.kvIndexer("ns", "kv", 2, 8090);
        kvi.getSpec().setSecurity(new Security(new Security.Tls(tls, null), new Security.Auth(auth)));
        return kvi;
    }

    /** A pod as the StatefulSet controller makes it from the template for {@code kvi} with {@code former}. */
    private static Pod podOf(KvIndexer kvi, FormerPeers former) {
        var template = IndexerDesiredState.statefulSet(kvi, IndexerDesiredState.POD_MANAGEMENT, List.of(), former)
                .getSpec()
                .getTemplate();
        return new PodBuilder()
                .withMetadata(template.getMetadata())
                .withSpec(template.getSpec())
                .build();
    }

    private static Pod podOf(KvIndexer kvi) {
        return podOf(kvi, FormerPeers.NONE);
    }

    private static FormerPeers former(KvIndexer now, Pod... pods) {
        return FormerPeers.of(now, Arrays.stream(pods).map(ServedAs::of).toList());
    }

    private static Container indexer(Pod pod) {
        return pod.getSpec().getContainers().getFirst();
    }

    /** Mount path → Secret name, of the Secret volumes the indexer container mounts. */
    private static Map<String, String> secretMounts(Pod pod) {
        PodSpec spec = pod.getSpec();
        Map<String, String> secrets = spec.getVolumes().stream()
                .filter(v -> v.getSecret() != null)
                .collect(Collectors.toMap(Volume::getName, v -> v.getSecret().getSecretName()));
        return indexer(pod).getVolumeMounts().stream()
                .filter(m -> secrets.containsKey(m.getName()))
                .collect(Collectors.toMap(VolumeMount::getMountPath, m -> secrets.get(m.getName())));
    }

    @Test
    void tlsTurnedOnAsksThePeersOverHttpsThenPlainHttp() {
        KvIndexer now = kvi(null, false);
        FormerPeers former = former(now, podOf(kvi(false, false)), podOf(now));
        assertThat(former).isEqualTo(new FormerPeers(true, null, null));
        Pod bridged = podOf(now, former);
        assertThat(indexer(bridged).getArgs()).containsSubsequence("--peers-dns-schemes", "https,http");
        assertThat(ServedAs.of(bridged)).isEqualTo(new ServedAs(true, "kv-tls", false, null));
        assertThat(former(now, bridged, bridged)).isEqualTo(FormerPeers.NONE);
    }

    @Test
    void tlsTurnedOffTrustsTheFormerCaAndAsksOverPlainHttpThenHttps() {
        KvIndexer now = kvi(false, false);
        FormerPeers former = former(now, podOf(kvi(null, false)));
        assertThat(former).isEqualTo(new FormerPeers(false, "kv-tls", null));
        Pod bridged = podOf(now, former);
        assertThat(indexer(bridged).getArgs())
                .containsSubsequence("--peers-dns-schemes", "http,https")
                .containsSubsequence("--tls-ca-file", IndexerSecurity.TLS_DIR + "/ca.crt")
                .doesNotContain(IndexerSecurity.TLS_CERT_FLAG);
        assertThat(secretMounts(bridged)).isEqualTo(Map.of(IndexerSecurity.TLS_DIR, "kv-tls"));
        assertThat(ServedAs.of(bridged)).isEqualTo(new ServedAs(false, null, false, null));
        assertThat(former(now, bridged)).isEqualTo(FormerPeers.NONE);
        assertThat(indexer(podOf(now)).getArgs()).doesNotContain("--peers-dns-schemes", "--tls-ca-file");
    }

    @Test
    void theTokenTurnedOffIsSentToPeersOnlyWhileAReplicaRequiresIt() {
        KvIndexer now = kvi(false, false);
        FormerPeers former = former(now, podOf(kvi(false, null)), podOf(now));
        assertThat(former).isEqualTo(new FormerPeers(false, null, "kv-auth"));
        Pod bridged = podOf(now, former);
        assertThat(indexer(bridged).getArgs())
                .containsSubsequence(FormerPeers.PEER_TOKEN_FLAG, IndexerSecurity.AUTH_DIR + "/token")
                .doesNotContain(IndexerSecurity.AUTH_TOKEN_FLAG);
        assertThat(secretMounts(bridged)).isEqualTo(Map.of(IndexerSecurity.AUTH_DIR, "kv-auth"));
        assertThat(ServedAs.of(bridged)).isEqualTo(new ServedAs(false, null, false, null));
        assertThat(former(now, bridged)).isEqualTo(FormerPeers.NONE);
    }

    @Test
    void bothTurnedOffTogetherNeedTheCaAndTheToken() {
        KvIndexer now = kvi(false, false);
        FormerPeers former = former(now, podOf(kvi(null, null)));
        assertThat(former).isEqualTo(new FormerPeers(false, "kv-tls", "kv-auth"));
        assertThat(secretMounts(podOf(now, former)))
                .isEqualTo(Map.of(IndexerSecurity.TLS_DIR, "kv-tls", IndexerSecurity.AUTH_DIR, "kv-auth"));
    }

    @Test
    void nothingWhenEveryPodServesAsTheSpecSaysOrTheTokenIsTurnedOn() {
        assertThat(former(kvi(null, null), podOf(kvi(null, null)), podOf(kvi(null, null))))
                .isEqualTo(FormerPeers.NONE);
        // the token turned on: the new replica sends its token, which a peer without one ignores
        assertThat(former(kvi(false, null), podOf(kvi(false, false)))).isEqualTo(FormerPeers.NONE);
        // a pod that does not say how it serves (no indexer container) is not waited for
        assertThat(FormerPeers.of(kvi(null, null), java.util.Collections.singletonList(null)))
                .isEqualTo(FormerPeers.NONE);
        assertThat(FormerPeers.NONE.args()).isEmpty();
        assertThat(FormerPeers.NONE.volumes()).isEmpty();
    }
}

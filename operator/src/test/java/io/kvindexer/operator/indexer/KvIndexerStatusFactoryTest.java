package io.kvindexer.operator.indexer;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Condition;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.reconcile.IndexerReplica;
import io.kvindexer.operator.support.Resources;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class KvIndexerStatusFactoryTest {
    private static final Instant T0 = Instant.parse("2026-01-02T03:04:05Z");
    private static final Instant T1 = Instant.parse("2026-01-02T04:00:00Z");

    private static KvIndexer kvi() {
        KvIndexer kvi = Resources.kvIndexer("llm", "kv", 2, 8090);
        kvi.getMetadata().setGeneration(4L);
        return kvi;
    }

    private static Condition cond(KvIndexer k, String type) {
        return Resources.condition(k.getStatus().conditions(), type);
    }

    @Test
    void countsReadyReplicasAndStampsConditions() {
        var factory = new KvIndexerStatusFactory(Clock.fixed(T0, ZoneOffset.UTC));
        KvIndexer patch = factory.status(
                kvi(),
                List.of(
                        new IndexerReplica(0, "kv-0", "10.0.0.1", true, true),
                        new IndexerReplica(1, "kv-1", "10.0.0.2", false, true)),
                Map.of());
        assertThat(patch.getSpec()).isNull();
        assertThat(patch.getStatus().ready()).isEqualTo("1/2");
        assertThat(patch.getStatus().readyReplicas()).isEqualTo(1);
        assertThat(patch.getStatus().observedGeneration()).isEqualTo(4L);
        assertThat(patch.getStatus().replicas()).isEqualTo(2);
        assertThat(patch.getStatus().pods())
                .extracting(r -> r.url())
                .containsExactly("https://kv-0.kv-peers.llm.svc:8090", "https://kv-1.kv-peers.llm.svc:8090");
        assertThat(cond(patch, "Ready").getStatus()).isEqualTo("False");
        assertThat(cond(patch, "Ready").getLastTransitionTime()).isEqualTo("2026-01-02T03:04:05Z");
        assertThat(cond(patch, "Ready").getObservedGeneration()).isEqualTo(4L);
        assertThat(cond(patch, "Progressing").getStatus()).isEqualTo("True");
        assertThat(cond(patch, "Degraded").getStatus()).isEqualTo("False");
    }

    @Test
    void transitionTimeMovesOnlyWhenTheValueChanges() {
        KvIndexer kvi = kvi();
        kvi.setStatus(new KvIndexerStatusFactory(Clock.fixed(T0, ZoneOffset.UTC))
                .status(kvi, List.of(), Map.of("kv-0", "down"))
                .getStatus());
        var later = new KvIndexerStatusFactory(Clock.fixed(T1, ZoneOffset.UTC));
        KvIndexer patch = later.status(
                kvi,
                List.of(new IndexerReplica(0, "kv-0", "a", true, true), new IndexerReplica(1, "kv-1", "b", true, true)),
                Map.of("kv-1", "peers failed"));
        assertThat(cond(patch, "Ready").getStatus()).isEqualTo("True");
        assertThat(cond(patch, "Ready").getLastTransitionTime()).isEqualTo("2026-01-02T04:00:00Z");
        assertThat(cond(patch, "Degraded").getStatus()).isEqualTo("True");
        assertThat(cond(patch, "Degraded").getLastTransitionTime()).isEqualTo("2026-01-02T03:04:05Z");
        assertThat(cond(patch, "Degraded").getMessage()).isEqualTo("kv-1: peers failed");
    }

    @Test
    void invalidSpecSaysWhy() {
        KvIndexer patch = new KvIndexerStatusFactory(Clock.fixed(T0, ZoneOffset.UTC))
                .refused(kvi(), "InvalidSpec", "spec.port bad");
        assertThat(cond(patch, "Ready").getReason()).isEqualTo("InvalidSpec");
        assertThat(cond(patch, "Ready").getMessage()).isEqualTo("spec.port bad");
    }
}

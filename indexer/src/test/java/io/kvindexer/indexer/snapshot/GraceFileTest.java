package io.kvindexer.indexer.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.dump.SavedRegistration;
import io.kvindexer.indexer.index.StoreTimes;
import io.kvindexer.indexer.registry.DetachedWorker;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A grace file carries each detached worker's watermark with the batch at it, as a snapshot's registration does: a
 * worker back after a restart shows an engine restart by that batch. The file dropped it, so the comeback trusted the
 * seq alone and took a restarted engine's batches past the watermark as the old stream's.
 */
class GraceFileTest {

    private static DetachedWorker worker(long id, long watermark, SavedRegistration.WatermarkBatch batch) {
        return new DetachedWorker(
                new SavedRegistration(
                        id, 0, "tcp://10.0.0." + id + ":5557", null, null, "m", "default", 16, watermark, batch),
                1_900_000_000_000L + id,
                List.of(),
                new StoreTimes());
    }

    @Test
    void theBatchAtEachWatermarkSurvivesTheFile() throws Exception {
        SavedRegistration.WatermarkBatch batch = new SavedRegistration.WatermarkBatch(0x1234_5678_9abc_def0L, 1765.25);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        GraceFile.write(List.of(worker(1, 41, batch), worker(2, 7, null)), out);

        List<DetachedWorker> back = GraceFile.read(new ByteArrayInputStream(out.toByteArray()));

        assertThat(back).hasSize(2);
        assertThat(back.get(0).registration().watermark()).isEqualTo(41);
        assertThat(back.get(0).registration().watermarkBatch()).isEqualTo(batch);
        assertThat(back.get(0).expiresAtMillis()).isEqualTo(1_900_000_000_001L);
        assertThat(back.get(1).registration().watermark()).isEqualTo(7);
        assertThat(back.get(1).registration().watermarkBatch())
                .as("not known: none")
                .isNull();
    }
}

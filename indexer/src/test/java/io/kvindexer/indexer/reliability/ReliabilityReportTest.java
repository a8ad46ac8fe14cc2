package io.kvindexer.indexer.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The regenerated report keeps the committed page's hand-written tail (the soak bench's figures). */
class ReliabilityReportTest {

    @Test
    void theHandWrittenSoakSectionIsCarriedIntoTheRegeneratedPage() throws Exception {
        String kept = ReliabilityReport.keptSection();
        assertThat(kept).startsWith("\n" + ReliabilityReport.KEPT);
        assertThat(kept).contains("## Soak", "bin/bench SoakBench");
    }
}

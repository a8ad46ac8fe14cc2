package io.kvindexer.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The agent trace generator is deterministic and the committed trace is exactly what it writes. */
class AgentTraceTest {

    @Test
    void theCommittedTraceIsWhatTheGeneratorWrites() throws Exception {
        Path committed = BenchSmoke.data("agent_trace_seed7.jsonl");
        Path regenerated = Path.of("target/agent_trace_seed7.jsonl");
        Files.createDirectories(regenerated.getParent());
        AgentTrace generator = new AgentTrace();
        generator.seed = 7;
        generator.out = regenerated;
        assertThat(generator.call()).isZero();
        assertThat(Files.mismatch(committed, regenerated))
                .as("first differing byte")
                .isEqualTo(-1L);
    }

    @Test
    void promptsGrowTurnByTurnOnSharedSystemPrompts() throws Exception {
        MooncakeTrace trace = MooncakeTrace.load(BenchSmoke.data("agent_trace_seed7.jsonl"), 0);
        List<MooncakeTrace.Request> requests = trace.requests();
        assertThat(requests).hasSize(8_413);
        // every prompt starts with the shared 8-block preamble
        assertThat(requests).allSatisfy(r -> assertThat(r.hashIds()).startsWith(0, 1, 2, 3, 4, 5, 6, 7));
        for (int i = 1; i < requests.size(); i++) {
            assertThat(requests.get(i).timestampMs())
                    .isGreaterThanOrEqualTo(requests.get(i - 1).timestampMs());
        }
        // sessions grow: many prompts are longer than any system prompt (8 + at most 32 blocks)
        long grown = requests.stream().filter(r -> r.hashIds().length > 40).count();
        assertThat(grown).isGreaterThan(1_000);
        AgentTrace small = new AgentTrace();
        small.sessions = 3;
        assertThat(small.generate()).isEqualTo(small.generate());
    }
}

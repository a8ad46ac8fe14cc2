package io.kvindexer.bench;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Writes a synthetic agent-style request trace in the Mooncake JSONL format ({@link MooncakeTrace}), the second
 * trace of {@code TraceBench}: long system prompts shared by every session of an agent (and a common preamble shared
 * by all agents), and sessions whose prompt grows turn by turn (each turn re-sends the whole conversation so far:
 * the previous answer and a new user or tool message are appended). That is the shape of tool-calling agents and
 * the case where many workers hold the same long prefix.
 *
 * <p>Deterministic: the same flags (above all {@code --seed}, which the committed file names carry) give the same
 * file byte for byte. Ids are 512-token trace blocks like Mooncake's; the preamble and the system prompts use ids
 * below 1,000,000, conversation blocks count up from there.
 */
@Command(
        name = "agent-trace",
        description = "Writes a deterministic agent-style Mooncake trace (shared system prompts, growing sessions).")
public final class AgentTrace extends BenchCommand {

    @Option(names = "--seed", description = "random seed; put it in the file name")
    long seed = 7;

    @Option(names = "--out", description = "where to write (default: data/agent_trace_seed<seed>.jsonl)")
    Path out;

    @Option(names = "--agents", description = "distinct system prompts")
    int agents = 6;

    @Option(names = "--preamble-blocks", description = "blocks of the preamble every agent shares")
    int preambleBlocks = 8;

    @Option(names = "--system-blocks-min", description = "shortest system prompt after the preamble, in blocks")
    int systemBlocksMin = 12;

    @Option(names = "--system-blocks-max", description = "longest system prompt after the preamble, in blocks")
    int systemBlocksMax = 32;

    @Option(names = "--sessions", description = "conversations")
    int sessions = 1_200;

    @Option(names = "--max-turns", description = "turns per session, 2 up to this")
    int maxTurns = 12;

    @Option(names = "--span-s", description = "sessions start over this many seconds")
    int spanSeconds = 3_600;

    /** One line of the trace. */
    record Line(long timestampMs, List<Long> hashIds, int outputLength) {}

    public static void main(String[] args) {
        System.exit(new CommandLine(new AgentTrace()).execute(args));
    }

    @Override
    public Integer call() throws IOException {
        Path file = out != null ? out : Path.of("data/agent_trace_seed" + seed + ".jsonl");
        List<Line> lines = generate();
        try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            for (Line line : lines) {
                StringBuilder sb = new StringBuilder(16 + 8 * line.hashIds().size());
                sb.append("{\"timestamp\": ")
                        .append(line.timestampMs())
                        .append(", \"input_length\": ")
                        .append(line.hashIds().size() * 512L)
                        .append(", \"output_length\": ")
                        .append(line.outputLength())
                        .append(", \"hash_ids\": [");
                for (int i = 0; i < line.hashIds().size(); i++) {
                    sb.append(i == 0 ? "" : ", ").append(line.hashIds().get(i));
                }
                w.write(sb.append("]}\n").toString());
            }
        }
        long ids = lines.stream().mapToLong(l -> l.hashIds().size()).sum();
        System.out.printf("wrote %s: %d requests, %d block refs%n", file, lines.size(), ids);
        return 0;
    }

    /** The trace's requests in time order. */
    List<Line> generate() {
        if (agents < 1 || sessions < 1 || maxTurns < 2 || systemBlocksMin < 0 || systemBlocksMax < systemBlocksMin) {
            throw new IllegalArgumentException("need --agents >= 1, --sessions >= 1, --max-turns >= 2 and "
                    + "0 <= --system-blocks-min <= --system-blocks-max");
        }
        SplittableRandom random = new SplittableRandom(seed);
        List<List<Long>> systemPrompts = new ArrayList<>();
        long nextId = 0;
        List<Long> preamble = new ArrayList<>();
        for (int i = 0; i < preambleBlocks; i++) {
            preamble.add(nextId++);
        }
        for (int a = 0; a < agents; a++) {
            List<Long> prompt = new ArrayList<>(preamble);
            int own = systemBlocksMin + random.nextInt(systemBlocksMax - systemBlocksMin + 1);
            for (int i = 0; i < own; i++) {
                prompt.add(nextId++);
            }
            systemPrompts.add(prompt);
        }
        long conversationId = 1_000_000;
        List<Line> lines = new ArrayList<>();
        for (int s = 0; s < sessions; s++) {
            // a few agents are far more popular than the others
            int agent = Math.min(agents - 1, (int) (agents * Math.pow(random.nextDouble(), 2)));
            List<Long> context = new ArrayList<>(systemPrompts.get(agent));
            long time = (long) (random.nextDouble() * spanSeconds * 1000);
            int turns = 2 + random.nextInt(maxTurns - 1);
            for (int t = 0; t < turns; t++) {
                int message = 1 + random.nextInt(random.nextInt(4) == 0 ? 8 : 2); // a user turn, or a tool result
                for (int i = 0; i < message; i++) {
                    context.add(conversationId++);
                }
                int output = 64 + random.nextInt(1_200);
                lines.add(new Line(time, List.copyOf(context), output));
                // the answer becomes part of the next turn's prompt
                for (int i = 0; i < (output + 511) / 512; i++) {
                    context.add(conversationId++);
                }
                time += 2_000 + random.nextInt(28_000);
            }
        }
        lines.sort(Comparator.comparingLong(Line::timestampMs));
        return lines;
    }
}

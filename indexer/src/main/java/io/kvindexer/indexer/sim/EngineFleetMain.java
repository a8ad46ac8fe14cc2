package io.kvindexer.indexer.sim;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;
import org.zeromq.ZContext;

/**
 * Many engine stand-ins in one process (a PUB and a replay ROUTER each, like vLLM ranks), for fleet-size tests and
 * benchmarks whose publishers must not share the indexer's process limits. Driven over stdin/stdout, one line each:
 *
 * <pre>
 *   args:   ENGINES [BLOCK_SIZE]
 *   out:    ENGINE i PUB_ENDPOINT REPLAY_ENDPOINT   (one per engine), then READY
 *   in:     subscribed        out: SUBSCRIBED n    (engines with at least one subscriber)
 *   in:     publish K         out: PUBLISHED K     (engine i stores one block of tokens K*1e6 + i*BLOCK_SIZE + ...)
 *   in:     burst N [B]       out: BURST N         (each engine publishes N batches of B blocks (default 1), all
 *                                                     engines at once)
 *   in:     pace N B R        out: PACED N S       (N rounds, one batch of B blocks per engine each, round k sent at
 *                                                     S + k / R seconds, S the start in epoch milliseconds)
 *   in:     quit
 * </pre>
 */
public final class EngineFleetMain {

    private EngineFleetMain() {}

    /** The tokens of engine {@code engine}'s block in round {@code round}: unique per engine and round. */
    public static int[] tokens(int round, int engine, int blockSize) {
        int base = round * 1_000_000 + engine * blockSize;
        return IntStream.range(base, base + blockSize).toArray();
    }

    public static void main(String[] args) throws Exception {
        int engines = Integer.parseInt(args[0]);
        int blockSize = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        try (ZContext context = new ZContext(1)) {
            context.getContext().setMaxSockets(2 * engines + 64);
            List<EngineSimulator> fleet = new ArrayList<>(engines);
            for (int i = 0; i < engines; i++) {
                EngineSimulator sim = EngineSimulator.Options.builder()
                        .context(context)
                        .bufferSteps(1_000)
                        .start();
                fleet.add(sim);
                out.println("ENGINE " + i + " " + sim.endpoint() + " " + sim.replayEndpoint());
            }
            out.println("READY");
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null; ) {
                String[] cmd = line.trim().split(" ");
                switch (cmd[0]) {
                    case "subscribed" ->
                        out.println("SUBSCRIBED "
                                + fleet.stream()
                                        .filter(s -> s.subscriptions() > 0)
                                        .count());
                    case "publish" -> {
                        int round = Integer.parseInt(cmd[1]);
                        List<CompletableFuture<Long>> sent = new ArrayList<>();
                        for (int i = 0; i < engines; i++) {
                            sent.add(fleet.get(i).storeSequence(tokens(round, i, blockSize), blockSize));
                        }
                        sent.forEach(CompletableFuture::join);
                        out.println("PUBLISHED " + round);
                    }
                    case "burst" -> {
                        int n = Integer.parseInt(cmd[1]);
                        int blocks = cmd.length > 2 ? Integer.parseInt(cmd[2]) : 1;
                        List<CompletableFuture<Long>> sent = new ArrayList<>();
                        for (int k = 0; k < n; k++) {
                            for (int i = 0; i < engines; i++) {
                                sent.add(
                                        fleet.get(i).storeSequence(tokens(1000 + k, i, blocks * blockSize), blockSize));
                            }
                        }
                        sent.forEach(CompletableFuture::join);
                        out.println("BURST " + n);
                    }
                    case "pace" -> {
                        int n = Integer.parseInt(cmd[1]);
                        int blocks = Integer.parseInt(cmd[2]);
                        double roundsPerSecond = Double.parseDouble(cmd[3]);
                        long startMillis = System.currentTimeMillis() + 100;
                        List<CompletableFuture<Long>> sent = new ArrayList<>();
                        for (int k = 0; k < n; k++) {
                            long due = startMillis + (long) (k * 1000 / roundsPerSecond);
                            long wait = due - System.currentTimeMillis();
                            if (wait > 0) {
                                Thread.sleep(wait);
                            }
                            for (int i = 0; i < engines; i++) {
                                sent.add(
                                        fleet.get(i).storeSequence(tokens(2000 + k, i, blocks * blockSize), blockSize));
                            }
                        }
                        sent.forEach(CompletableFuture::join);
                        out.println("PACED " + n + " " + startMillis);
                    }
                    case "quit" -> {
                        fleet.forEach(EngineSimulator::close);
                        return;
                    }
                    default -> out.println("UNKNOWN " + line);
                }
            }
            fleet.forEach(EngineSimulator::close);
        }
    }
}

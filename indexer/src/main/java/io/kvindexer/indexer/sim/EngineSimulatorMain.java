package io.kvindexer.indexer.sim;

import io.kvindexer.indexer.sim.EngineEventEncoder.Format;
import io.kvindexer.indexer.sim.EngineEventEncoder.HashMode;
import io.kvindexer.indexer.sim.EngineSimulator.ReplayLayout;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.locks.LockSupport;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Runs an {@link EngineSimulator} on its own: a prefix-caching engine model fed with a generated workload
 * (requests that share a few system prompts), publishing the resulting KV events like a vLLM engine.
 */
@Command(
        name = "engine-simulator",
        mixinStandardHelpOptions = true,
        description = "Publishes vLLM-compatible KV events (ZMQ PUB + replay ROUTER) for a generated workload.")
public final class EngineSimulatorMain implements Callable<Integer> {

    @Option(
            names = "--endpoint",
            defaultValue = "tcp://*:5557",
            description = "PUB bind address (default: ${DEFAULT-VALUE})")
    String endpoint;

    @Option(names = "--replay-endpoint", description = "replay ROUTER bind address; off when not given")
    String replayEndpoint;

    @Option(names = "--block-size", defaultValue = "16", description = "tokens per block (default: ${DEFAULT-VALUE})")
    int blockSize;

    @Option(
            names = "--rate",
            defaultValue = "50",
            description = "requests served per second (default: ${DEFAULT-VALUE})")
    double rate;

    @Option(
            names = "--capacity-blocks",
            defaultValue = "1024",
            description = "prefix-cache size in blocks (default: ${DEFAULT-VALUE})")
    int capacityBlocks;

    @Option(
            names = "--prefixes",
            defaultValue = "8",
            description = "distinct shared system prompts (default: ${DEFAULT-VALUE})")
    int prefixes;

    @Option(
            names = "--prefix-blocks",
            defaultValue = "4",
            description = "blocks per shared prompt (default: ${DEFAULT-VALUE})")
    int prefixBlocks;

    @Option(
            names = "--max-suffix-blocks",
            defaultValue = "8",
            description = "most blocks of request-specific tokens (default: ${DEFAULT-VALUE})")
    int maxSuffixBlocks;

    @Option(
            names = "--requests",
            defaultValue = "0",
            description = "stop after this many requests; 0 runs until killed")
    long requests;

    @Option(
            names = "--then-idle",
            description = "after --requests, stay up without publishing (answering replays) until killed, as an engine"
                    + " that has served its requests does")
    boolean thenIdle;

    @Option(
            names = "--dp-rank",
            defaultValue = "0",
            description = "data-parallel rank stamped in batches (default: ${DEFAULT-VALUE})")
    int dpRank;

    @Option(names = "--topic", defaultValue = "", description = "topic frame")
    String topic;

    @Option(
            names = "--format",
            defaultValue = "MAP",
            description = "event shapes: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE})")
    Format format;

    @Option(
            names = "--hash-mode",
            defaultValue = "U64",
            description = "block hash encoding: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE})")
    HashMode hashMode;

    @Option(
            names = "--replay-layout",
            defaultValue = "WITH_TOPIC",
            description = "replay reply frames: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE})")
    ReplayLayout replayLayout;

    @Option(
            names = "--buffer-steps",
            defaultValue = "10000",
            description = "batches kept for replay (default: ${DEFAULT-VALUE})")
    int bufferSteps;

    @Option(names = "--seed", defaultValue = "42", description = "workload random seed (default: ${DEFAULT-VALUE})")
    long seed;

    @Override
    public Integer call() throws InterruptedException {
        EngineSimulator.Options options = EngineSimulator.Options.builder()
                .endpoint(endpoint)
                .replayEndpoint(replayEndpoint)
                .dpRank(dpRank)
                .topic(topic)
                .format(format)
                .hashMode(hashMode)
                .replayLayout(replayLayout)
                .bufferSteps(bufferSteps)
                .build();
        try (EngineSimulator sim = EngineSimulator.start(options)) {
            System.out.println("publishing on " + sim.endpoint()
                    + (sim.replayEndpoint() == null ? " (replay off)" : ", replay on " + sim.replayEndpoint()));
            PrefixCacheEngine engine = new PrefixCacheEngine(capacityBlocks, blockSize);
            SplittableRandom random = new SplittableRandom(seed);
            long periodNanos = (long) (1_000_000_000L / rate);
            long next = System.nanoTime();
            long batches = 0;
            for (long served = 0; requests == 0 || served < requests; served++) {
                PrefixCacheEngine.Served result = engine.serve(request(random));
                if (!result.events().isEmpty()) {
                    sim.publish(result.events());
                    batches++;
                }
                if (served % 1000 == 999) {
                    System.out.printf(
                            "requests %d, batches %d, cached blocks %d%n", served + 1, batches, engine.cachedBlocks());
                }
                next += periodNanos;
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait);
                }
            }
            System.out.printf("done: %d requests, %d batches%n", requests, batches);
            System.out.flush();
            while (thenIdle) { // the socket thread answers replays meanwhile
                Thread.sleep(Long.MAX_VALUE);
            }
        }
        return 0;
    }

    private int[] request(SplittableRandom random) {
        int prefix = random.nextInt(prefixes);
        int suffixBlocks = random.nextInt(maxSuffixBlocks + 1);
        int[] tokens = new int[(prefixBlocks + suffixBlocks) * blockSize + random.nextInt(blockSize)];
        for (int i = 0; i < prefixBlocks * blockSize; i++) {
            tokens[i] = 1000 * (prefix + 1) + i; // the same system prompt for everyone who picks it
        }
        for (int i = prefixBlocks * blockSize; i < tokens.length; i++) {
            tokens[i] = random.nextInt(32_000);
        }
        return tokens;
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new EngineSimulatorMain())
                .setCaseInsensitiveEnumValuesAllowed(true)
                .execute(args));
    }
}

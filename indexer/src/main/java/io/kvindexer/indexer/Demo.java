package io.kvindexer.indexer;

import io.kvindexer.indexer.common.Tenants;
import io.kvindexer.indexer.registry.Registration;
import io.kvindexer.indexer.registry.RegistryException;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.indexer.sim.PrefixCacheEngine;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * {@code --demo}: three embedded engine simulators on loopback (vLLM-compatible PUB + replay ROUTER) serving a
 * small generated workload — a shared system prompt, per-engine conversations, evictions — registered with this
 * indexer, so that {@code /workers}, {@code /query} and {@code /metrics} show live data at once.
 */
final class Demo implements AutoCloseable {

    static final String MODEL = "demo-model";
    static final int BLOCK_SIZE = 16;
    private static final int ENGINES = 3;
    private static final int SYSTEM_PROMPT_TOKENS = 64;

    private final List<EngineSimulator> sims = new ArrayList<>();
    private final List<PrefixCacheEngine> caches = new ArrayList<>();
    private final Thread traffic;
    private final int[] exampleQuery;

    /** Where the demo registers its engines: the registry's register, nothing more of the app. */
    @FunctionalInterface
    interface Registrar {
        void register(Registration registration) throws RegistryException;
    }

    private Demo(Registrar registrar) throws RegistryException {
        try {
            for (int i = 0; i < ENGINES; i++) {
                EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults());
                sims.add(sim);
                caches.add(new PrefixCacheEngine(256, BLOCK_SIZE));
                registrar.register(new Registration(
                        i + 1, sim.endpoint(), MODEL, Tenants.DEFAULT, BLOCK_SIZE, 0, sim.replayEndpoint(), null));
            }
        } catch (RegistryException | RuntimeException e) {
            sims.forEach(EngineSimulator::close); // no engine outlives a failed start
            throw e;
        }
        // engine 1 holds the system prompt plus a conversation; engine 2 only the system prompt
        exampleQuery = concat(systemPrompt(), conversation(1, 48));
        serve(0, exampleQuery);
        serve(1, concat(systemPrompt(), conversation(2, 32)));
        traffic = Thread.ofVirtual().name("demo-traffic").start(this::trafficLoop);
    }

    static Demo start(Registrar registrar) {
        try {
            return new Demo(registrar);
        } catch (RegistryException e) {
            throw new IllegalStateException("demo registration failed: " + e.getMessage(), e);
        }
    }

    private void serve(int engine, int[] tokens) {
        // one engine's cache decisions and their events in the same order, whichever thread serves
        synchronized (caches.get(engine)) {
            PrefixCacheEngine.Served served = caches.get(engine).serve(tokens);
            if (!served.events().isEmpty()) {
                try {
                    sims.get(engine).publish(served.events()).get(10, TimeUnit.SECONDS);
                } catch (Exception e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /** A request every half second on a random engine: mostly the shared prompt plus a fresh conversation. */
    private void trafficLoop() {
        Random random = new Random(42);
        try {
            while (!Thread.currentThread().isInterrupted()) {
                Thread.sleep(500);
                trafficStep(random);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * One request of the generated traffic. Engine 1 is asked the printed example again after each of its requests,
     * so its least-recently-used eviction never takes it: the example answers as printed however long the demo runs.
     */
    void trafficStep(Random random) {
        int engine = random.nextInt(ENGINES);
        int[] convo = conversation(100 + random.nextInt(50), 16 + random.nextInt(64));
        serve(engine, random.nextInt(4) == 0 ? convo : concat(systemPrompt(), convo));
        if (engine == 0) {
            serve(0, exampleQuery);
        }
    }

    /** The seq of the last batch engine {@code engine} (0-based) published. */
    long lastSeq(int engine) {
        return sims.get(engine).nextSeq() - 1;
    }

    /** {@code requests} more requests at once, spread over the engines as the traffic loop spreads them. */
    void burst(int requests) {
        Random random = new Random(7);
        for (int i = 0; i < requests; i++) {
            int[] convo = conversation(1000 + i, 16 + random.nextInt(112));
            serve(i % ENGINES, random.nextInt(4) == 0 ? convo : concat(systemPrompt(), convo));
        }
    }

    /**
     * Three ready-to-paste curl lines for this server; {@code caFile} (null for none) is the CA they trust, for a
     * server whose certificate a private CA issued: curl trusts the system's CAs only, and refused every line.
     */
    String curls(String base, Path caFile) {
        String tokens = IntStream.of(exampleQuery).mapToObj(Integer::toString).collect(Collectors.joining(","));
        String curl = caFile == null ? "curl -s" : "curl -s --cacert " + shellWord(caFile.toString());
        return "\nkv-indexer demo: " + ENGINES + " simulated engines publish KV events for model \"" + MODEL
                + "\" (block size " + BLOCK_SIZE + "). Try:\n"
                + "  " + curl + " " + base + "/workers\n"
                + "  " + curl + " -X POST " + base + "/query -H 'Content-Type: application/json' -d '{\"model_name\":\""
                + MODEL + "\",\"token_ids\":[" + tokens + "]}'\n"
                + "  " + curl + " " + base + "/metrics | grep dynamo_kv\n"
                + "or open the web console: " + base + "/ui/  (this query: " + base + "/ui/#query?model_name=" + MODEL
                + "&token_ids=" + tokens + ")\n";
    }

    /** {@code word} as one shell word: as it is when it is plain, else in single quotes. */
    static String shellWord(String word) {
        return word.matches("[A-Za-z0-9_./:=+-]+") ? word : "'" + word.replace("'", "'\\''") + "'";
    }

    static int[] systemPrompt() {
        return IntStream.rangeClosed(1, SYSTEM_PROMPT_TOKENS).toArray();
    }

    /** A deterministic conversation body, different per id. */
    static int[] conversation(int id, int length) {
        return IntStream.range(0, length).map(i -> 1000 * id + i).toArray();
    }

    private static int[] concat(int[] a, int[] b) {
        return IntStream.concat(IntStream.of(a), IntStream.of(b)).toArray();
    }

    int[] exampleQuery() {
        return exampleQuery.clone();
    }

    @Override
    public void close() {
        traffic.interrupt();
        sims.forEach(EngineSimulator::close);
    }
}

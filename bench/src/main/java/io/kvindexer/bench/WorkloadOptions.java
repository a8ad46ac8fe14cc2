package io.kvindexer.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Option;

/** The trace and engine flags shared by every trace-driven benchmark ({@link TraceBench} and the end-to-end ones). */
public final class WorkloadOptions {

    /** These flags with another default number of simulated engines (TraceBench's is Dynamo's 64). */
    static WorkloadOptions withWorkers(int workers) {
        WorkloadOptions options = new WorkloadOptions();
        options.workers = workers;
        return options;
    }

    /** These flags with other default numbers of simulated engines and of GPU blocks per engine. */
    static WorkloadOptions sized(int workers, int engineBlocks) {
        WorkloadOptions options = withWorkers(workers);
        options.engineBlocks = engineBlocks;
        return options;
    }

    @Option(names = "--trace", description = "Mooncake JSONL trace")
    Path trace = Path.of("data/mooncake_conversation_trace.jsonl");

    @Option(names = "--trace-block-size", description = "tokens per trace hash id")
    int traceBlockSize = 512;

    @Option(names = "--block-size", description = "tokens per engine block")
    int blockSize = 128;

    @Option(names = "--workers", description = "simulated engines")
    int workers = 8;

    @Option(names = "--engine-blocks", description = "GPU blocks per engine")
    int engineBlocks = 16_384;

    @Option(names = "--length-factor", description = "each trace id becomes this many")
    int lengthFactor = 1;

    @Option(names = "--dup-factor", description = "copies of the trace in disjoint id spaces")
    int dupFactor = 1;

    @Option(names = "--seed", description = "partition seed")
    long seed = 42;

    @Option(names = "--requests", description = "use only the first N requests of the trace (0: all)")
    int requests = 0;

    MooncakeTrace loadTrace() throws IOException {
        return MooncakeTrace.load(trace, requests).lengthFactor(lengthFactor).dupFactor(dupFactor);
    }

    Workload.Spec spec() {
        return new Workload.Spec(traceBlockSize, blockSize, workers, engineBlocks, seed);
    }

    Workload build() throws IOException {
        return Workload.build(loadTrace(), spec());
    }

    /** These flags' values under their JSON names (the flag without dashes, in snake case). */
    Map<String, Object> toJson() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("trace", trace.toString());
        out.put("requests", requests);
        out.put("trace_block_size", traceBlockSize);
        out.put("block_size", blockSize);
        out.put("workers", workers);
        out.put("engine_blocks", engineBlocks);
        out.put("length_factor", lengthFactor);
        out.put("dup_factor", dupFactor);
        out.put("seed", seed);
        return out;
    }
}

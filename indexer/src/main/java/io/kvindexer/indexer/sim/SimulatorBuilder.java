package io.kvindexer.indexer.sim;

import io.kvindexer.indexer.sim.EngineEventEncoder.Format;
import io.kvindexer.indexer.sim.EngineEventEncoder.HashMode;
import io.kvindexer.indexer.sim.EngineSimulator.ReplayLayout;
import org.zeromq.ZContext;

/** Builds {@link EngineSimulator.Options}; starts from the defaults (loopback, free ports, replay on, map events). */
public final class SimulatorBuilder {

    private String endpoint = "tcp://127.0.0.1:*";
    private String replayEndpoint = "tcp://127.0.0.1:*";
    private int dpRank;
    private String topic = "";
    private int bufferSteps = 10_000;
    private int hwm = 100_000;
    private Format format = Format.MAP;
    private HashMode hashMode = HashMode.U64;
    private ReplayLayout replayLayout = ReplayLayout.WITH_TOPIC;
    private long startSeq;
    private Double fixedTs;
    private ZContext context;

    SimulatorBuilder() {}

    public SimulatorBuilder endpoint(String v) {
        endpoint = v;
        return this;
    }

    public SimulatorBuilder replayEndpoint(String v) {
        replayEndpoint = v;
        return this;
    }

    public SimulatorBuilder dpRank(int v) {
        dpRank = v;
        return this;
    }

    public SimulatorBuilder topic(String v) {
        topic = v;
        return this;
    }

    public SimulatorBuilder bufferSteps(int v) {
        bufferSteps = v;
        return this;
    }

    public SimulatorBuilder hwm(int v) {
        hwm = v;
        return this;
    }

    public SimulatorBuilder format(Format v) {
        format = v;
        return this;
    }

    public SimulatorBuilder hashMode(HashMode v) {
        hashMode = v;
        return this;
    }

    public SimulatorBuilder replayLayout(ReplayLayout v) {
        replayLayout = v;
        return this;
    }

    public SimulatorBuilder startSeq(long v) {
        startSeq = v;
        return this;
    }

    public SimulatorBuilder fixedTs(Double v) {
        fixedTs = v;
        return this;
    }

    public SimulatorBuilder context(ZContext v) {
        context = v;
        return this;
    }

    public EngineSimulator.Options build() {
        return new EngineSimulator.Options(
                endpoint,
                replayEndpoint,
                dpRank,
                topic,
                bufferSteps,
                hwm,
                format,
                hashMode,
                replayLayout,
                startSeq,
                fixedTs,
                context);
    }

    /** Builds and {@link EngineSimulator#start starts} a simulator. */
    public EngineSimulator start() {
        return EngineSimulator.start(build());
    }
}

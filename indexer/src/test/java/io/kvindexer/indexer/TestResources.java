package io.kvindexer.indexer;

import io.kvindexer.indexer.ingest.BatchSink;
import io.kvindexer.indexer.ingest.EngineListener;
import io.kvindexer.indexer.ingest.ListenerOptions;
import io.kvindexer.indexer.ingest.ListenerSpec;
import io.kvindexer.indexer.ingest.ReadyGate;
import io.kvindexer.indexer.ingest.SequenceWatermark;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * What a test opened (simulators, listeners, sockets), closed after each test in the reverse order of opening (after
 * the test's own {@code @AfterEach}). Use as a {@code @RegisterExtension} field.
 */
public final class TestResources implements AfterEachCallback {

    private final List<AutoCloseable> open = new ArrayList<>();

    /** Closes {@code resource} after the test; returns it. */
    public <T extends AutoCloseable> T add(T resource) {
        open.add(resource);
        return resource;
    }

    /**
     * A simulator on an endpoint that a previous one has just released: a bind can briefly fail there, so it is
     * retried a few times.
     */
    public EngineSimulator simulatorAt(String endpoint, String replayEndpoint) {
        for (int attempt = 1; ; attempt++) {
            try {
                return add(EngineSimulator.start(EngineSimulator.Options.builder()
                        .endpoint(endpoint)
                        .replayEndpoint(replayEndpoint)
                        .build()));
            } catch (RuntimeException e) {
                if (attempt == 20) {
                    throw e;
                }
                try {
                    Thread.sleep(100);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    /** A listener on an open gate, started; closed after the test. */
    public EngineListener listener(
            ListenerSpec spec, SequenceWatermark watermark, BatchSink sink, ListenerOptions options) {
        EngineListener listener = add(new EngineListener(spec, watermark, sink, ReadyGate.open(), options));
        listener.start();
        return listener;
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
        open.clear();
    }
}

package io.kvindexer.indexer.ingest;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/** IngestMetrics that count by name, e.g. {@code malformed.frame_count}, {@code replay.timeout}. */
final class CountingMetrics implements IngestMetrics {

    private final Map<String, LongAdder> counters = new ConcurrentHashMap<>();

    private void add(String name, long n) {
        counters.computeIfAbsent(name, k -> new LongAdder()).add(n);
    }

    /** The default listener options, reporting here. */
    ListenerOptions options() {
        return ListenerOptions.defaults().with(o -> o.metrics = this);
    }

    long get(String name) {
        LongAdder a = counters.get(name);
        return a == null ? 0 : a.sum();
    }

    long sumStartingWith(String prefix) {
        return counters.entrySet().stream()
                .filter(e -> e.getKey().startsWith(prefix))
                .mapToLong(e -> e.getValue().sum())
                .sum();
    }

    @Override
    public void malformedFrame(String kind) {
        add("malformed." + kind, 1);
    }

    @Override
    public void decodeError(String kind) {
        add("decode." + kind, 1);
    }

    @Override
    public void gapDetected(long missing) {
        add("gaps", 1);
        add("gaps.missing", missing);
    }

    @Override
    public void batchesLost(long missing) {
        add("lost", missing);
    }

    @Override
    public void replay(ReplayResult result, long batchesRecovered) {
        add("replay.recovered", batchesRecovered); // first: a test that waits for the outcome then reads both
        add("replay." + result.label(), 1);
    }

    @Override
    public void unknownEvents(int count) {
        add("unknown", count);
    }

    @Override
    public void publisherRestarted() {
        add("restarts", 1);
    }

    @Override
    public void batchApplied() {
        add("applied", 1);
    }

    @Override
    public void staleBatch() {
        add("stale", 1);
    }

    @Override
    public void gapUnrecoverable(long missing) {
        add("unrecoverable", 1);
        add("unrecoverable.missing", missing);
    }

    @Override
    public void handshakeRetry() {
        add("handshake.retries", 1);
    }

    @Override
    public void engineDisconnected() {
        add("disconnects", 1);
    }

    @Override
    public String toString() {
        return counters.toString();
    }
}

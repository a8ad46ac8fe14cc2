package io.kvindexer.indexer.metrics;

import io.kvindexer.indexer.event.EventWarning;
import io.kvindexer.indexer.expiry.BlockExpiry;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.index.ModelIndex;
import io.kvindexer.indexer.ingest.IngestMetrics;
import io.kvindexer.indexer.ingest.ListenerStatus;
import io.kvindexer.indexer.registry.GraceOutcome;
import io.kvindexer.indexer.registry.WorkerRegistry;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.expositionformats.ExpositionFormatWriter;
import io.prometheus.metrics.expositionformats.ExpositionFormats;
import io.prometheus.metrics.instrumentation.jvm.JvmBufferPoolMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmClassLoadingMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmCompilationMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmGarbageCollectorMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmMemoryMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmRuntimeInfoMetric;
import io.prometheus.metrics.instrumentation.jvm.JvmThreadsMetrics;
import io.prometheus.metrics.instrumentation.jvm.ProcessMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * Every metric of the service in one private {@link PrometheusRegistry}: Dynamo's six
 * {@code dynamo_kvindexer_*} metrics (compatibility.md, Metrics, same names and labels so dashboards keep working), the index's
 * event counters under Dynamo's {@code dynamo_kvrouter_kv_cache_events_applied} name, index sizes, query latency
 * and the ingest counters (decode errors, gaps, replays, restarts); and the JVM's and the process's {@code jvm_*} and
 * {@code process_*} metrics.
 *
 * <p>Values that the registry or the indexes already hold are read at scrape time (callbacks), never duplicated.
 */
public final class IndexerMetrics {

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final ExpositionFormats formats = ExpositionFormats.init();

    private final Histogram requestDuration =
            latency("dynamo_kvindexer_request_duration_seconds", "HTTP request duration", 0.0001);
    private final Counter requests = counter("dynamo_kvindexer_requests_total", "HTTP requests", "endpoint", "method");
    private final Counter errors =
            counter("dynamo_kvindexer_errors_total", "HTTP responses with status >= 400", "endpoint", "status_class");
    private final Histogram queryDuration = latency(
            "dynamo_kvindexer_query_duration_seconds",
            "Time to hash a query and match it against the index (no HTTP, no JSON)",
            0.00001);

    private final Counter malformedFrames = counter(
            "dynamo_kvindexer_malformed_frames_total",
            "Live ZMQ messages with a wrong frame count or seq length, skipped, by kind",
            "kind");
    private final Counter decodeErrors = counter(
            "dynamo_kvindexer_decode_errors_total", "Engine payloads that did not decode, skipped, by kind", "kind");
    private final Counter gaps = counter(
            "dynamo_kvindexer_sequence_gaps_total",
            "Sequence gaps detected on live streams (including a first seq above 0)");
    private final Counter batchesLost = counter(
            "dynamo_kvindexer_batches_lost_total",
            "Batches missed in a gap that could not be replayed (no replay endpoint)");
    private final Counter replays = counter(
            "dynamo_kvindexer_replays_total",
            "Replay exchanges with an engine's ROUTER, by result (ok, incomplete, failed, timeout)",
            "result");
    private final Counter batchesRecovered =
            counter("dynamo_kvindexer_replayed_batches_total", "Batches applied from replays");
    private final Counter publisherRestarts = counter(
            "dynamo_kvindexer_publisher_restarts_total", "Engine publishers seen restarting (sequence went back)");
    private final Counter unknownEvents =
            counter("dynamo_kvindexer_unknown_events_total", "Engine events with an unknown tag, skipped");
    private final Counter batchesApplied =
            counter("dynamo_kvindexer_batches_applied_total", "Engine batches applied to the index (live or replayed)");
    private final Counter staleBatches = counter(
            "dynamo_kvindexer_stale_batches_total", "Live batches skipped because their seq was already applied");

    /** Decoder-side event warnings by kind label; exposed with the index-side ones in {@link #bind}. */
    private final Map<String, LongAdder> eventWarnings = new ConcurrentHashMap<>();

    private final Counter gapsUnrecoverable = counter(
            "dynamo_kvindexer_unrecoverable_gaps_total",
            "Sequence gaps that could not be filled; the worker's blocks were dropped when it held any");
    private final Counter handshakeRetries = counter(
            "dynamo_kvindexer_handshake_retries_total",
            "ZMQ connections dropped and made again because their ZMTP handshake did not finish in time");
    private final Counter engineDisconnects = counter(
            "dynamo_kvindexer_engine_disconnects_total",
            "Handshaken ZMQ SUB connections to engines that went down (engine stopped, network broken)");

    private final Counter accessLogDropped = counter(
            "dynamo_kvindexer_access_log_dropped_total",
            "--access-log records not written: the writer was that far behind, or the file could not be written");

    private final Counter snapshots = counter(
            "dynamo_kvindexer_snapshots_total",
            "Local snapshots by event: written, write_failed, loaded, damaged (a file that did not verify, skipped)",
            "event");

    private final Gauge snapshotBytes = Gauge.builder()
            .name("dynamo_kvindexer_snapshot_bytes")
            .help("Size of the newest snapshot in --snapshot-dir; a volume needs room for three")
            .labelNames("dir") // no series before the first snapshot (an unlabelled gauge would read 0)
            .register(registry);

    private final Gauge snapshotDirFree = Gauge.builder()
            .name("dynamo_kvindexer_snapshot_dir_free_bytes")
            .help("Usable space left in --snapshot-dir after the newest snapshot; the next one needs about as much")
            .labelNames("dir")
            .register(registry);

    private final Gauge snapshotLastSuccess = Gauge.builder()
            .name("dynamo_kvindexer_snapshot_last_success_timestamp_seconds")
            .help("When the newest snapshot in --snapshot-dir was written (Unix time): the one found there at start,"
                    + " else the start itself, then each one written")
            .labelNames("dir")
            .register(registry);

    private final Gauge snapshotInterval = Gauge.builder()
            .name("dynamo_kvindexer_snapshot_interval_seconds")
            .help("--snapshot-interval: a snapshot older than a few of these is overdue")
            .labelNames("dir")
            .register(registry);

    private final Gauge startupRecovery = Gauge.builder()
            .name("dynamo_kvindexer_startup_recovery_seconds")
            .help("How long startup recovery took, by where the state came from: peer, snapshot, blank_peer, none")
            .labelNames("source")
            .register(registry);

    /** The listeners' reports, as counters. */
    private final IngestMetrics ingest = new IngestMetrics() {
        @Override
        public void malformedFrame(String kind) {
            malformedFrames.labelValues(kind).inc();
        }

        @Override
        public void decodeError(String kind) {
            decodeErrors.labelValues(kind).inc();
        }

        @Override
        public void gapDetected(long missing) {
            gaps.inc();
        }

        @Override
        public void batchesLost(long missing) {
            batchesLost.inc(unsigned(missing));
        }

        @Override
        public void replay(ReplayResult result, long recovered) {
            replays.labelValues(result.label()).inc();
            batchesRecovered.inc(unsigned(recovered));
        }

        @Override
        public void unknownEvents(int count) {
            unknownEvents.inc(count);
        }

        @Override
        public void eventWarning(String kind, int count) {
            eventWarnings.computeIfAbsent(kind, k -> new LongAdder()).add(count);
        }

        @Override
        public void publisherRestarted() {
            publisherRestarts.inc();
        }

        @Override
        public void batchApplied() {
            batchesApplied.inc();
        }

        @Override
        public void staleBatch() {
            staleBatches.inc();
        }

        @Override
        public void gapUnrecoverable(long missing) {
            gapsUnrecoverable.inc();
        }

        @Override
        public void handshakeRetry() {
            handshakeRetries.inc();
        }

        @Override
        public void engineDisconnected() {
            engineDisconnects.inc();
        }
    };

    {
        // the JVM's and the process's own (heap, GC pauses, threads, open file descriptors, resident memory), read at
        // scrape time. Not JvmMemoryPoolAllocationMetrics: it adds a GC listener per registry that is never removed.
        JvmMemoryMetrics.builder().register(registry);
        JvmGarbageCollectorMetrics.builder().register(registry);
        JvmThreadsMetrics.builder().register(registry);
        JvmBufferPoolMetrics.builder().register(registry);
        JvmClassLoadingMetrics.builder().register(registry);
        JvmCompilationMetrics.builder().register(registry);
        JvmRuntimeInfoMetric.builder().register(registry);
        ProcessMetrics.builder().register(registry);
    }

    /** Seconds per {@code endpoint}, in 20 classic buckets doubling from {@code firstBucket}. */
    private Histogram latency(String name, String help, double firstBucket) {
        return Histogram.builder()
                .name(name)
                .help(help)
                .labelNames("endpoint")
                .classicExponentialUpperBounds(firstBucket, 2, 20)
                .classicOnly()
                .register(registry);
    }

    private Counter counter(String name, String help, String... labelNames) {
        return Counter.builder().name(name).help(help).labelNames(labelNames).register(registry);
    }

    /** One count of items lost, by its labels. */
    @FunctionalInterface
    public interface LossCount {
        void count(String signal, String reason, long items);
    }

    /**
     * With {@code OTEL_EXPORT_ENABLED}: spans and log records the OpenTelemetry SDK lost, which {@code report} hands
     * over at scrape time, one count per (signal, reason).
     */
    public void bindTelemetryLosses(java.util.function.Consumer<LossCount> report) {
        CounterWithCallback.builder()
                .name("dynamo_kvindexer_telemetry_lost")
                .help("Spans and log records not exported over OTLP, by signal (spans, logs) and reason (dropped: the"
                        + " SDK's queue was full; failed: the collector refused them or could not be reached)")
                .labelNames("signal", "reason")
                .callback(cb -> report.accept((signal, reason, items) -> cb.call(items, signal, reason)))
                .register(registry);
    }

    /** Reads the registry and the indexes at scrape time. */
    public void bind(WorkerRegistry workers, Indexers indexers) {
        Supplier<List<ModelIndex>> all = indexers::all;
        GaugeWithCallback.builder()
                .name("dynamo_kvindexer_models")
                .help("Indexers by model and tenant")
                .callback(cb -> cb.call(all.get().size()))
                .register(registry);
        GaugeWithCallback.builder()
                .name("dynamo_kvindexer_workers")
                .help("Registered worker instances")
                .callback(cb -> cb.call(workers.instanceCount()))
                .register(registry);
        GaugeWithCallback.builder()
                .name("dynamo_kvindexer_listeners")
                .help("ZMQ listeners by status")
                .labelNames("status")
                .callback(cb -> {
                    for (Map.Entry<ListenerStatus, Integer> e :
                            workers.listenerCounts().entrySet()) {
                        cb.call(e.getValue(), e.getKey().label());
                    }
                })
                .register(registry);
        GaugeWithCallback.builder()
                .name("dynamo_kvindexer_listeners_by_exactness")
                .help(
                        "Active and pending ZMQ listeners by exactness: exact, replaying, degraded (paused and failed ones"
                                + " read no stream: dynamo_kvindexer_listeners counts them)")
                .labelNames("exactness")
                .callback(cb -> workers.exactnessCounts().forEach((state, n) -> cb.call(n, state.label())))
                .register(registry);
        GaugeWithCallback.builder()
                .name("dynamo_kvindexer_listeners_by_connection")
                .help("Active and pending ZMQ listeners by their engine connection: connected, disconnected (was up,"
                        + " lost), not_connected (never up yet)")
                .labelNames("connection")
                .callback(cb -> workers.connectionCounts().forEach((state, n) -> cb.call(n, state.label())))
                .register(registry);
        GaugeWithCallback.builder()
                .name("dynamo_kvindexer_index_blocks")
                .help("Distinct blocks held in an index")
                .labelNames("model", "tenant")
                .callback(cb -> all.get().forEach(ix -> cb.call(ix.stats().blocks(), ix.modelName(), ix.tenantId())))
                .register(registry);
        GaugeWithCallback.builder()
                .name("dynamo_kvindexer_index_memberships")
                .help("(worker, block, tier) memberships held in an index")
                .labelNames("model", "tenant")
                .callback(
                        cb -> all.get().forEach(ix -> cb.call(ix.stats().memberships(), ix.modelName(), ix.tenantId())))
                .register(registry);
        // Dynamo's name, kept for dashboards; exposed as a gauge so that the name stays exactly Dynamo's
        // (a Java counter would gain a _total suffix). Summed over every index the process has held.
        GaugeWithCallback.builder()
                .name("dynamo_kvrouter_kv_cache_events_applied")
                .help(
                        "KV cache events applied to the indexes, by event type and result (monotonic while the process lives)")
                .labelNames("event_type", "status")
                .callback(cb -> {
                    Map<String, Map<String, Long>> sum = indexers.appliedTotals();
                    // every ok series, and the other results once they happened (not the meaningless combinations)
                    sum.forEach((type, byStatus) -> byStatus.forEach((status, n) -> {
                        if (n > 0 || "ok".equals(status)) {
                            cb.call(n, type, status);
                        }
                    }));
                })
                .register(registry);
        bindEventWarnings(indexers);
        CounterWithCallback.builder()
                .name("dynamo_kvindexer_index_write_failures")
                .help("Index writes that threw: a bug; that worker rank's blocks were dropped and its listener degraded"
                        + " (logged with its stack trace)")
                .callback(cb -> cb.call(indexers.writeFailures()))
                .register(registry);
        CounterWithCallback.builder()
                .name("dynamo_kvindexer_unregister_grace")
                .help("Worker ranks whose blocks --unregister-grace kept detached, by outcome: reattached, or dropped"
                        + " (restart, gap, block_size, endpoint, index, expired)")
                .labelNames("outcome")
                .callback(cb -> {
                    for (GraceOutcome o : GraceOutcome.values()) {
                        cb.call(workers.graceOutcomes(o), o.label());
                    }
                })
                .register(registry);
    }

    /**
     * Dynamo's {@code dynamo_kvrouter_kv_cache_event_warnings{warning_kind}}, as a gauge for the same reason as
     * events_applied: the decoder's warnings as the listeners reported them, plus the index's
     * {@code duplicate_store} and {@code unknown_storage_block} stores summed over every index the process has held. Every kind is
     * exposed, zeros included, so dashboards and alerts need no "absent" handling.
     */
    private void bindEventWarnings(Indexers indexers) {
        GaugeWithCallback.builder()
                .name("dynamo_kvrouter_kv_cache_event_warnings")
                .help("KV cache events not indexed as they came (or indexed on a fallback tier), by warning kind")
                .labelNames("warning_kind")
                .callback(cb -> {
                    Map<String, Long> stored = indexers.appliedTotals().getOrDefault("stored", Map.of());
                    long duplicate = stored.getOrDefault(EventWarning.DUPLICATE_STORE.label(), 0L);
                    long unknownStorage = stored.getOrDefault(EventWarning.UNKNOWN_STORAGE_BLOCK.label(), 0L);
                    for (EventWarning w : EventWarning.values()) {
                        long n = switch (w) {
                            case DUPLICATE_STORE -> duplicate;
                            case UNKNOWN_STORAGE_BLOCK -> unknownStorage;
                            default -> {
                                LongAdder a = eventWarnings.get(w.label());
                                yield a == null ? 0 : a.sum();
                            }
                        };
                        cb.call(n, w.label());
                    }
                })
                .register(registry);
    }

    /** The block expiry's bounds and what it removed ({@code --block-ttl}, {@code --max-blocks-per-worker}). */
    public void bindExpiry(BlockExpiry expiry) {
        ExpiryMetrics.register(registry, expiry);
    }

    /** One finished HTTP request; {@code endpoint} is the route template or {@code unknown}. */
    public void httpRequest(String endpoint, String method, int status, double seconds, boolean timed) {
        requests.labelValues(endpoint, methodLabel(method)).inc();
        if (timed) {
            requestDuration.labelValues(endpoint).observe(seconds);
        }
        if (status >= 500) {
            errors.labelValues(endpoint, "5xx").inc();
        } else if (status >= 400) {
            errors.labelValues(endpoint, "4xx").inc();
        }
    }

    /**
     * The standard methods as they are, any other {@code other}: the server accepts any token as a method (and answers
     * 405), so a client could otherwise add a series per request.
     */
    static String methodLabel(String method) {
        return HTTP_METHODS.contains(method) ? method : "other";
    }

    private static final Set<String> HTTP_METHODS =
            Set.of("GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH");

    /** One access-log record dropped. */
    public void accessLogDropped() {
        accessLogDropped.inc();
    }

    /**
     * With {@code --snapshot-dir} (snapshots go to {@code dir} every {@code interval}): every event's series from the
     * start, at 0, so that an alert's {@code increase()} sees the first failure (a series that first appears at 1 has
     * not increased). Until a snapshot is found there or written, the last success is now (the start): a replica with
     * no snapshot yet is not overdue before it had the chance to write one, and one that never manages to is, a few
     * intervals later.
     */
    public void snapshotsEnabled(Path dir, Duration interval) {
        for (String event : List.of("written", "write_failed", "loaded", "damaged")) {
            snapshots.initLabelValues(event);
        }
        snapshotInterval.labelValues(dir.toString()).set(interval.toMillis() / 1000.0);
        snapshotLastSuccess.labelValues(dir.toString()).set(System.currentTimeMillis() / 1000.0);
    }

    /** A snapshot was written, failed to write, was loaded, or was found damaged. */
    public void snapshot(String event) {
        snapshots.labelValues(event).inc();
    }

    /**
     * The newest snapshot in {@code dir} was written at {@code writtenMillis} (epoch ms) and has {@code bytes},
     * {@code freeBytes} left beside it (-1: unknown, not set).
     */
    public void newestSnapshot(Path dir, long writtenMillis, long bytes, long freeBytes) {
        snapshotLastSuccess.labelValues(dir.toString()).set(writtenMillis / 1000.0);
        snapshotBytes.labelValues(dir.toString()).set(bytes);
        if (freeBytes >= 0) {
            snapshotDirFree.labelValues(dir.toString()).set(freeBytes);
        }
    }

    /** Startup recovery is over: the state came from {@code source} after {@code seconds}; one series, once. */
    public void startupRecovery(String source, double seconds) {
        startupRecovery.labelValues(source).set(seconds);
    }

    public void queryMatched(String endpoint, double seconds) {
        queryDuration.labelValues(endpoint).observe(seconds);
    }

    /** What the ZMQ listeners report to. */
    public IngestMetrics ingest() {
        return ingest;
    }

    /** Writes the exposition for an {@code Accept} header; returns the content type used. */
    public String write(String accept, OutputStream out) throws IOException {
        ExpositionFormatWriter writer = formats.findWriter(accept);
        if (!writer.isAvailable()) {
            writer = formats.getPrometheusTextFormatWriter();
        }
        writer.write(out, registry.scrape());
        return writer.getContentType();
    }

    /**
     * A count of sequence numbers, which are u64 on the wire: a range from 0 to an engine's first seq (TensorRT-LLM
     * starts at the clock's nanoseconds) reads as a negative long, and one negative increment would make every
     * later scrape fail.
     */
    static double unsigned(long count) {
        return count >= 0 ? count : 0x1p64 + count;
    }
}

package io.kvindexer.indexer.http;

import com.fasterxml.jackson.core.JsonGenerator;
import io.helidon.webserver.http.ServerRequest;
import io.kvindexer.indexer.common.IoErrors;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The {@code --access-log} file: one JSON record per request, {@code {"ts", "trace_id", "method", "path", "model",
 * "status", "duration_ms"}}, as Dynamo's standalone indexer writes it. A request thread only formats its line and
 * queues it; one writer thread appends the lines, so a slow disk never slows an answer. A full queue drops lines
 * and counts them, as Dynamo's non-blocking writer does. {@link #reopen} opens the file again by its name, for a
 * log rotation that moved it away ({@code POST /reopen_logs}).
 */
public final class AccessLog implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(AccessLog.class.getName());

    /** Lines waiting for the writer: seconds of requests at the rates a replica serves. */
    static final int QUEUE = 65_536;

    private static final DateTimeFormatter UTC =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);
    private static final DateTimeFormatter LOCAL =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSxxx").withZone(ZoneId.systemDefault());

    /** The model a handler served, for its request's record ({@code "-"} when none was named). */
    public record Model(String name) {}

    private final AccessLogSettings settings;
    private final DateTimeFormatter timestamps;
    private final Runnable onDrop;
    private final BlockingQueue<String> lines = new ArrayBlockingQueue<>(QUEUE);
    private final Object fileLock = new Object();
    private final Thread writer;
    private Writer out; // guarded by fileLock
    /** lines queued so far, and lines the writer has taken off the queue (written, or dropped when it failed) */
    private final AtomicLong queued = new AtomicLong();

    private long taken; // guarded by fileLock
    private volatile boolean closed;

    private AccessLog(AccessLogSettings settings, Runnable onDrop) throws IOException {
        this.settings = settings;
        this.timestamps = settings.localTime() ? LOCAL : UTC;
        this.onDrop = onDrop;
        this.out = open();
        this.writer = Thread.ofPlatform().daemon().name("access-log").start(this::writeLoop);
    }

    /**
     * Opens (creates, or appends to) the settings' file.
     *
     * @param onDrop told of every line dropped (a metric)
     * @throws IOException the file cannot be opened for appending: the message says why
     */
    public static AccessLog open(AccessLogSettings settings, Runnable onDrop) throws IOException {
        return new AccessLog(settings, onDrop);
    }

    public AccessLogSettings settings() {
        return settings;
    }

    /**
     * Names the model {@code req} is about, for its record and its span; handlers call it once they have read the
     * body. Only a look at the thread's span when {@code log} is null (no access log) and no span records.
     */
    public static void model(AccessLog log, ServerRequest req, String model) {
        if (log != null) {
            req.context().register(new Model(model));
        }
        RequestTracing.model(model);
    }

    /** Queues one request's record; drops it (counted) when the writer is that far behind. */
    void record(Instant at, String traceId, String method, String path, String model, int status, long nanos) {
        if (lines.offer(line(at, traceId, method, path, model, status, nanos))) {
            queued.incrementAndGet();
        } else {
            onDrop.run();
        }
    }

    String line(Instant at, String traceId, String method, String path, String model, int status, long nanos) {
        StringWriter s = new StringWriter(160);
        try (JsonGenerator g = JsonOut.FACTORY.createGenerator(s)) {
            g.writeStartObject();
            g.writeStringField("ts", timestamps.format(at));
            g.writeStringField("trace_id", traceId);
            g.writeStringField("method", method);
            g.writeStringField("path", path);
            g.writeStringField("model", model);
            g.writeNumberField("status", status);
            g.writeNumberField("duration_ms", Math.round(nanos / 1e3) / 1e3); // to the microsecond
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return s.toString();
    }

    /**
     * Opens the file again by its name and writes on there; the old one is closed once what was queued before is in
     * it. Thrown when the file cannot be opened: the old one is kept then.
     */
    public void reopen() throws IOException {
        long before = queued.get();
        synchronized (fileLock) {
            // the lines of requests answered before this one belong in the old file: wait for the writer to take
            // them (a few milliseconds; at most 5 s for a disk that hangs, then they go into the new file)
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            for (long left; taken < before && !closed && (left = until - System.nanoTime()) > 0; ) {
                try {
                    fileLock.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            Writer old = swapInFresh();
            try {
                old.close();
            } catch (IOException e) {
                LOG.log(
                        System.Logger.Level.WARNING,
                        "closing the rotated access log: {0}",
                        IoErrors.describe(e, settings.file()));
            }
        }
    }

    /** A new writer on the file, the old one's buffer discarded; the old one stays when the file cannot be opened. */
    private void freshWriter() {
        try {
            swapInFresh().close();
        } catch (IOException e) {
            // the old writer's close flushes what failed before: failing again is expected; not opened: try later
        }
    }

    /** Opens the file by its name and writes on there from now on; returns the writer it replaced, still open. */
    private Writer swapInFresh() throws IOException { // under fileLock
        Writer old = out;
        out = open();
        return old;
    }

    private Writer open() throws IOException {
        try {
            return new BufferedWriter(
                    Files.newBufferedWriter(
                            settings.file(),
                            StandardCharsets.UTF_8,
                            StandardOpenOption.CREATE,
                            StandardOpenOption.APPEND,
                            StandardOpenOption.WRITE),
                    64 * 1024);
        } catch (IOException e) {
            throw new IOException(
                    "cannot open --access-log " + settings.file() + ": " + IoErrors.describe(e, settings.file()), e);
        }
    }

    private void writeLoop() {
        List<String> batch = new ArrayList<>();
        boolean failing = false;
        while (!closed || !lines.isEmpty()) {
            try {
                String first = lines.poll(100, TimeUnit.MILLISECONDS);
                if (first == null) {
                    continue;
                }
                batch.add(first);
            } catch (InterruptedException e) {
                continue; // close() interrupts a waiting writer; the loop ends once the queue is empty
            }
            lines.drainTo(batch);
            synchronized (fileLock) {
                try {
                    for (String line : batch) {
                        out.write(line);
                        out.write('\n');
                    }
                    out.flush();
                    failing = false;
                } catch (IOException e) {
                    for (int i = 0; i < batch.size(); i++) {
                        onDrop.run();
                    }
                    if (!failing) { // once per streak of failures, not once per line
                        LOG.log(
                                System.Logger.Level.WARNING,
                                "access log {0} not written (lines are dropped and counted until it is): {1}",
                                settings.file(),
                                IoErrors.describe(e, settings.file()));
                    }
                    failing = true;
                    freshWriter(); // the failed lines stay in the old writer's buffer: counted as dropped, so dropped
                }
                taken += batch.size();
                fileLock.notifyAll(); // a reopen waiting for these lines
            }
            batch.clear();
        }
    }

    /** Writes what is queued, then closes the file. */
    @Override
    public void close() {
        closed = true;
        writer.interrupt();
        try {
            writer.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (fileLock) {
            try {
                out.close();
            } catch (IOException e) {
                // closing at shutdown: nothing left to tell
            }
        }
    }
}

package io.kvindexer.indexer.reliability;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Collects one row per fault test and rewrites {@code target/reliability.md} from all rows recorded so far. Each
 * row lives in its own file under {@code target/reliability-rows/} (keyed by test name, so a rerun replaces
 * it); the table is regenerated after every row. Tests write nothing into the source tree: the committed
 * {@code docs/reliability.md} is refreshed on purpose with {@code -Pupdate-docs} (see CONTRIBUTING.md).
 */
public final class ReliabilityReport {

    /**
     * One measured fault.
     *
     * @param test        test that measured it (file key)
     * @param fault       what was injected
     * @param load        workload, in words
     * @param inputs      inputs tried (batches published, payloads fuzzed, requests sent)
     * @param sent        ZMQ batches the engines put on the wire or buffered (-1: not applicable)
     * @param applied     batches the indexer applied (batches_applied_total; -1: not applicable)
     * @param expected    memberships (worker, rank, tier, block) the engines hold (-1: not applicable)
     * @param found       memberships the indexer's /dump holds (-1: not applicable)
     * @param lost        expected memberships missing plus found ones the engines do not hold (or failures)
     * @param convergeMs  time from the end of the fault to the last successful comparison (-1: n/a)
     * @param note        outcome in words
     */
    public record Row(
            String test,
            String fault,
            String load,
            long inputs,
            long sent,
            long applied,
            long expected,
            long found,
            long lost,
            long convergeMs,
            String note) {
        String tsv() {
            return String.join(
                    "\t",
                    test,
                    fault,
                    load,
                    Long.toString(inputs),
                    Long.toString(sent),
                    Long.toString(applied),
                    Long.toString(expected),
                    Long.toString(found),
                    Long.toString(lost),
                    Long.toString(convergeMs),
                    note);
        }

        /** The row's cells in the markdown table, {@code -} where not applicable. */
        List<String> cells() {
            return List.of(
                    test,
                    fault,
                    load,
                    n(inputs),
                    n(sent),
                    n(applied),
                    n(expected),
                    n(found),
                    n(lost),
                    convergeMs < 0 ? "-" : convergeMs + " ms",
                    note);
        }

        static Row parse(String line) {
            String[] f = line.split("\t", -1);
            return new Row(
                    f[0],
                    f[1],
                    f[2],
                    Long.parseLong(f[3]),
                    Long.parseLong(f[4]),
                    Long.parseLong(f[5]),
                    Long.parseLong(f[6]),
                    Long.parseLong(f[7]),
                    Long.parseLong(f[8]),
                    Long.parseLong(f[9]),
                    f[10]);
        }
    }

    private static final Path ROWS = Path.of("target", "reliability-rows");
    private static final Path DOC = Path.of("target", "reliability.md");
    /** The committed page: what follows {@link #KEPT} in it is hand-written (the soak bench's figures) and kept. */
    private static final Path COMMITTED = Path.of("..", "docs", "reliability.md");

    static final String KEPT =
            "<!-- Hand-written from here on: kept as it is when the tables above are regenerated -->";

    private ReliabilityReport() {}

    public static boolean soak() {
        return Boolean.getBoolean("kvindexer.soak");
    }

    /** Normal CI size, or {@code soakFactor} times it under {@code -Dkvindexer.soak=true}. */
    public static int scaled(int base, int soakFactor) {
        return soak() ? base * soakFactor : base;
    }

    public static synchronized void record(Row row) {
        System.out.println("reliability: " + row);
        try {
            Files.createDirectories(ROWS);
            Files.writeString(
                    ROWS.resolve(row.test().replaceAll("[^A-Za-z0-9_.-]", "_") + ".tsv"),
                    row.tsv() + "\n",
                    StandardCharsets.UTF_8);
            writeDoc();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void writeDoc() throws IOException {
        List<Row> rows = new ArrayList<>();
        try (Stream<Path> files = Files.list(ROWS)) {
            for (Path p : files.sorted().toList()) {
                rows.add(Row.parse(Files.readString(p, StandardCharsets.UTF_8).strip()));
            }
        }
        if (!Files.isDirectory(DOC.getParent())) {
            return; // not run from the indexer module directory
        }
        StringBuilder md = new StringBuilder();
        md.append("# Reliability figures\n\n")
                .append("Written by the test suite itself (`io.kvindexer.indexer.reliability`, see ")
                .append("`ReliabilityReport`) under `indexer/target/`; do not edit by hand. Regenerate with\n")
                .append(
                        "`bin/run-tests -pl indexer -am -Pupdate-docs -Dtest='*FaultTest,*FuzzTest,*KillTest,*TornReadTest'"
                                + " -Dsurefire.failIfNoSpecifiedTests=false`")
                .append(" (add `-Dkvindexer.soak=true` for the long versions).\n\n")
                .append("Run: ")
                .append(soak() ? "soak" : "CI (bounded)")
                .append(", ")
                .append(Runtime.getRuntime().availableProcessors())
                .append(" cores, Java ")
                .append(Runtime.version().feature())
                .append(".\n\n")
                .append("Memberships are (worker, dp rank, tier, block) tuples; *expected* is what the engine ")
                .append("simulators hold (their ground truth), *found* what the indexer's `/dump` holds; *lost* ")
                .append("counts the symmetric difference (or, for fuzzing, inputs that got a wrong answer). ")
                .append("Batches are ZMQ event batches; *applied* is `dynamo_kvindexer_batches_applied_total`. ")
                .append("`-` means not applicable.\n\n")
                .append("| test | fault | load | inputs tried | batches sent | batches applied | expected | found")
                .append(" | lost | time to converge | outcome |\n")
                .append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
        for (Row r : rows) {
            md.append("| ").append(String.join(" | ", r.cells())).append(" |\n");
        }
        md.append("\n## What the suites found and what was changed\n\n")
                .append("- A request body that ended before its declared `Content-Length` (client gone) was a 500 ")
                .append("with an internal exception name; it is now a 400 JSON error (`http-fuzz`).\n")
                .append("- A live batch that cannot be decoded still carries a seq; the listener records it as the ")
                .append("last live seq. If a valid batch then reuses that seq, the listener takes it for an engine ")
                .append("restart (drop the worker's blocks, replay from 0): the index converges again, at the cost of ")
                .append("a full replay. Real engines never reuse a seq; the garbage test treats a corrupted batch as ")
                .append("lost (`listener-garbage`). A later seq then looks like a gap over the corrupted ones; they ")
                .append("arrived, so they are not replayed (an engine buffers the bytes it published). Until ")
                .append("083a652 each such gap was replayed, and the test converged in ~25 s instead of under ")
                .append("a second.\n")
                .append("- Replay buffer too small (`zmq-buffer-too-small`): the listener reports the gap ")
                .append("(`dynamo_kvindexer_replays_total{result=\"incomplete\"}`, `last_error` in `/workers`, a log ")
                .append("line) and keeps what it has plus what the replay returned; every drifted membership is a ")
                .append("block a lost batch touched. The documented resync is an engine restart (or ")
                .append("`AllBlocksCleared`): after it the index is exact again.\n")
                .append("- Operator churn (operator module, `OperatorChurnTest`, 200 rounds on the CRUD mock server, ")
                .append("figures printed by the test): registrations were left behind when the KvWorker status in ")
                .append("the informer cache lagged; the reconciler now also remembers what it registered.\n")
                .append("- A client that sent headers and part of a body, then stalled without closing, held its ")
                .append("connection open for good (Helidon 4.5 has no server-side read timeout); it now gets a 408 ")
                .append("JSON error and the connection is closed after `--request-read-timeout-ms` (default 30 s) ")
                .append("while other clients are served (`StalledBodyTest`).\n")
                .append("- API server restart (operator module, `ApiServerRestartTest`: the mock API server destroyed ")
                .append("and rebound to the same port with the same objects): the operator's informers re-watch and ")
                .append("pod changes made afterwards reach every replica; no operator change was needed.\n");
        md.append(keptSection());
        Files.writeString(DOC, md.toString(), StandardCharsets.UTF_8);
    }

    /** The committed page's hand-written tail, from {@link #KEPT} on (with a blank line before it); else nothing. */
    static String keptSection() throws IOException {
        if (!Files.isRegularFile(COMMITTED)) {
            return "";
        }
        String committed = Files.readString(COMMITTED, StandardCharsets.UTF_8);
        int at = committed.indexOf(KEPT);
        return at < 0 ? "" : "\n" + committed.substring(at);
    }

    private static String n(long v) {
        return v < 0 ? "-" : Long.toString(v);
    }
}

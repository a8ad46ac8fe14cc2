package io.kvindexer.indexer;

import io.kvindexer.indexer.ingest.ZmqContext;
import io.kvindexer.logging.LogSettings;
import io.kvindexer.logging.ShutdownLogManager;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.logging.Level;

/** {@code java -jar kv-indexer.jar [flags]}: parse, start, wait for Ctrl-C. Wiring only. */
public final class IndexerMain {

    private IndexerMain() {}

    public static void main(String[] args) throws InterruptedException {
        ShutdownLogManager.Install.now();
        IndexerCli.Parsed parsed;
        LogSettings logs;
        try {
            parsed = IndexerCli.parse(args, System.getenv());
            logs = LogSettings.fromEnv(System.getenv());
        } catch (ConfigException | IllegalArgumentException e) {
            System.err.println("kv-indexer: " + e.getMessage());
            System.exit(2);
            return;
        }
        if (parsed.config() == null) {
            System.out.print(parsed.helpText());
            return;
        }
        // JUL's defaults (one console handler) with our line format and levels; Helidon's own lines from WARN up,
        // but for the one that says how long the start took
        logs.apply(Map.of("io.helidon", Level.WARNING, "io.helidon.webserver.LoomServer", Level.INFO));
        if (parsed.aotTraining()) {
            AotTraining.run();
            System.exit(0);
            return;
        }
        IndexerApp app;
        try {
            app = IndexerApp.start(parsed.config());
        } catch (ConfigException e) {
            System.err.println("kv-indexer: " + e.getMessage());
            System.exit(2);
            return;
        } catch (RuntimeException e) {
            System.err.println("kv-indexer: cannot start: " + e.getMessage());
            System.exit(1);
            return;
        }
        // the hook before the first line that says we listen: a SIGTERM right after it still shuts down cleanly
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            try {
                                app.drain(parsed.shutdownDelay());
                                app.close();
                                ZmqContext.closeShared();
                            } finally {
                                ShutdownLogManager.shutdownDone(); // what the close logged is printed by now
                                stopped.countDown();
                            }
                        },
                        "kv-indexer-shutdown"));
        ShutdownLogManager.awaitShutdown(); // only once the hook is in: JUL's own must never wait for nothing
        // a replica whose startup recovery died of an Error would stay unready for good: exit, to be restarted
        // (the hook stops what runs; no snapshot is written, as the writer starts only after recovery)
        app.startupError().thenRun(() -> System.exit(1));
        if (logs.jsonl()) {
            // a log of JSON lines (kubectl logs merges both streams) gets no line for people: the same as one record,
            // the demo's commands included
            String demo = app.demoCurls() == null ? "" : app.demoCurls().stripTrailing();
            System.getLogger(IndexerMain.class.getName())
                    .log(
                            System.Logger.Level.INFO,
                            "kv-indexer listening on {0} (web console: {0}/ui/){1}",
                            app.baseUrl(),
                            demo);
        } else {
            System.out.println("kv-indexer listening on " + app.baseUrl());
            System.out.println("kv-indexer web console: " + app.baseUrl() + "/ui/");
            if (app.demoCurls() != null) {
                System.out.println(app.demoCurls());
            }
        }
        stopped.await();
    }
}

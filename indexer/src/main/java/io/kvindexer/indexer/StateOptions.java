package io.kvindexer.indexer;

import java.nio.file.Path;
import java.time.Duration;
import picocli.CommandLine.Option;

/** The flags of a replica's state across restarts and re-registrations, mixed into {@link IndexerCli}. */
public final class StateOptions {

    @Option(
            names = "--snapshot-dir",
            paramLabel = "DIR",
            description = "write a snapshot of the index, registrations and watermarks here every"
                    + " --snapshot-interval and about 1 s after a registration comes or goes, and start from it when"
                    + " no peer answers, or only blank ones"
                    + " (default: none)")
    Path snapshotDir;

    @Option(
            names = "--snapshot-interval",
            paramLabel = "DURATION",
            description = "time between two snapshots in --snapshot-dir, e.g. 500ms, 30s, 5m (default: 30s)")
    String snapshotInterval;

    @Option(
            names = "--unregister-grace",
            paramLabel = "DURATION",
            description = "keep an unregistered worker's blocks, hidden, this long: the same worker registering again"
                    + " at the same endpoint with its stream continuing gets them back (default: ${DEFAULT-VALUE},"
                    + " Dynamo's: dropped at once)")
    String unregisterGrace = "0";

    Duration snapshotInterval() throws ConfigException {
        if (snapshotInterval == null) {
            return IndexerConfig.DEFAULT_SNAPSHOT_INTERVAL;
        }
        if (snapshotDir == null) {
            // without a directory nothing is written: the directory was most likely forgotten
            throw new ConfigException(
                    "--snapshot-dir is required when --snapshot-interval is specified (snapshots are written only there)");
        }
        Duration d = DurationFlags.parse("--snapshot-interval", snapshotInterval);
        if (d.isZero()) {
            throw new ConfigException("invalid value for --snapshot-interval: must be above 0");
        }
        return d;
    }

    Duration unregisterGrace() throws ConfigException {
        return DurationFlags.parse("--unregister-grace", unregisterGrace);
    }
}

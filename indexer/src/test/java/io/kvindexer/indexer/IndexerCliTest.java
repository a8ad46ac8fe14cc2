package io.kvindexer.indexer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvindexer.indexer.http.AccessLogSettings;
import io.kvindexer.indexer.recovery.PeerDiscovery;
import io.kvindexer.indexer.registry.WorkerEntry;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;

class IndexerCliTest {

    private static IndexerConfig parse(Map<String, String> env, String... args) throws ConfigException {
        return IndexerCli.parse(args, env).config();
    }

    private static IndexerConfig parse(String... args) throws ConfigException {
        return parse(Map.of(), args);
    }

    @Test
    void defaultsMatchDynamo() throws Exception {
        IndexerConfig c = parse();
        assertThat(c.port()).isEqualTo(8090);
        assertThat(c.host()).isEqualTo("0.0.0.0");
        assertThat(c.threads()).isEqualTo(4);
        assertThat(c.blockSize()).isNull();
        assertThat(c.workers()).isEmpty();
        assertThat(c.modelName()).isEqualTo("default");
        assertThat(c.tenantId()).isEqualTo("default");
        assertThat(c.peers()).isEmpty();
        assertThat(c.demo()).isFalse();
        assertThat(c.mixCacheSalt()).isFalse();
        assertThat(c.maxQueryBodyBytes()).isEqualTo(8_388_608L);
        assertThat(c.minInitialWorkers()).isZero();
        assertThat(c.testEndpoints()).isFalse();
    }

    /** {@code --aot-training} (the AOT cache's training run, IndexerImageTest runs it) is off unless given. */
    @Test
    void aotTrainingIsOffUnlessGiven() throws Exception {
        assertThat(IndexerCli.parse(new String[0], Map.of()).aotTraining()).isFalse();
        IndexerCli.Parsed training = IndexerCli.parse(new String[] {"--aot-training"}, Map.of());
        assertThat(training.aotTraining()).isTrue();
        assertThat(training.config()).isNotNull();
    }

    @Test
    void parsesWorkersWithRanks() throws Exception {
        IndexerConfig c = parse(
                "--block-size",
                "16",
                "--model-name",
                "llama",
                "--tenant-id",
                "t1",
                "--workers",
                "1=tcp://host:5557,2:1=tcp://host:5558",
                "--port",
                "0",
                "--host",
                "127.0.0.5",
                "--threads",
                "2");
        assertThat(c.workers())
                .containsExactly(new WorkerEntry(1, 0, "tcp://host:5557"), new WorkerEntry(2, 1, "tcp://host:5558"));
        assertThat(c.blockSize()).isEqualTo(16);
        assertThat(c.modelName()).isEqualTo("llama");
        assertThat(c.tenantId()).isEqualTo("t1");
        assertThat(c.port()).isZero();
        assertThat(c.host()).isEqualTo("127.0.0.5");
        assertThat(c.threads()).isEqualTo(2);
    }

    @Test
    void indexShardsDefaultToOneAndAtMostTheWriterThreads() throws Exception {
        assertThat(parse().indexOptions().shards()).isEqualTo(1);
        IndexerConfig two = parse("--threads", "2", "--index-shards", "2");
        assertThat(two.indexShards()).isEqualTo(2);
        assertThat(two.indexOptions()).isEqualTo(new io.kvindexer.indexer.index.IndexOptions(false, 2, 2));
        assertThatThrownBy(() -> parse("--threads", "2", "--index-shards", "3"))
                .hasMessageContaining("invalid value for --index-shards: 3");
        assertThatThrownBy(() -> parse("--index-shards", "0")).hasMessageContaining("--index-shards");
    }

    @Test
    void blockTtlAndMaxBlocksPerWorkerAreOffUnlessGiven() throws Exception {
        assertThat(parse().expiry()).isEqualTo(io.kvindexer.indexer.expiry.ExpiryPolicy.NONE);
        IndexerConfig c = parse("--block-ttl", "host_pinned=10m,external=6h", "--max-blocks-per-worker", "200000");
        assertThat(c.expiry().ttlText()).isEqualTo("host_pinned=10m,external=6h");
        assertThat(c.expiry().maxBlocksPerWorker()).isEqualTo(200_000);
        assertThat(c.expiry().enabled()).isTrue();
        assertThatThrownBy(() -> parse("--block-ttl", "gpu=10m"))
                .isInstanceOf(ConfigException.class)
                .hasMessage("invalid value for --block-ttl: unknown tier 'gpu' (expected device, host_pinned, disk,"
                        + " external)");
        assertThatThrownBy(() -> parse("--block-ttl", "disk=10 minutes"))
                .hasMessageStartingWith("invalid value for --block-ttl: '10 minutes' is not a duration");
        assertThatThrownBy(() -> parse("--max-blocks-per-worker", "-1"))
                .hasMessage("invalid value for --max-blocks-per-worker: max blocks per worker must be >= 0, got -1");
    }

    @Test
    void aLimitBelowOneIsRefusedByItsFlag() {
        assertThatThrownBy(() -> parse("--max-listeners", "-1"))
                .isInstanceOf(ConfigException.class)
                .hasMessage("invalid value for --max-listeners: -1 (expected at least 1)");
        assertThatThrownBy(() -> parse("--max-concurrent-replays", "0"))
                .hasMessage("invalid value for --max-concurrent-replays: 0 (expected at least 1)");
        assertThatThrownBy(() -> parse("--request-read-timeout-ms", "0"))
                .hasMessage("invalid value for --request-read-timeout-ms: 0 (expected at least 1)");
        assertThatThrownBy(() -> parse("--max-query-body-bytes", "0"))
                .hasMessage("invalid value for --max-query-body-bytes: 0 (must be > 0)");
        assertThatThrownBy(() -> parse("--block-size", "0", "--workers", "1=tcp://127.0.0.1:1"))
                .hasMessage("invalid value for --block-size: 0 is out of range (1..2147483647 tokens)");
        assertThatThrownBy(() -> parse("--block-size", "3000000000", "--workers", "1=tcp://127.0.0.1:1"))
                .hasMessage("invalid value for --block-size: 3000000000 is out of range (1..2147483647 tokens)");
    }

    /** Every duration flag (found by its parameter label, so a new one is covered) refuses what does not fit. */
    @Test
    void aDurationTooLargeIsRefusedByItsFlag(@TempDir Path dir) throws Exception {
        // the flags some of them need beside them
        String token = Files.writeString(dir.resolve("token"), "t\n").toString();
        String[] needed = {"--snapshot-dir", "/tmp/s", "--auth-token-file", token};
        List<String> flags = new CommandLine(new IndexerCli())
                .getCommandSpec().options().stream()
                        .filter(o -> o.paramLabel().contains("DURATION"))
                        .map(OptionSpec::longestName)
                        .toList();
        assertThat(flags)
                .contains(
                        "--shutdown-delay",
                        "--snapshot-interval",
                        "--unregister-grace",
                        "--auth-token-grace",
                        "--reload-interval",
                        "--degraded-hold",
                        "--block-ttl");
        for (String flag : flags) {
            String prefix = flag.equals("--block-ttl") ? "disk=" : "";
            for (String[] tooLarge : new String[][] {
                {"9999999999999999h", "2562047h"},
                {"99999999999h", "2562047h"},
                {"9223372036854775807ms", "9223372036854ms"}
            }) {
                assertThatThrownBy(() -> parse(with(needed, flag, prefix + tooLarge[0])))
                        .isInstanceOf(ConfigException.class)
                        .hasMessage("invalid value for " + flag + ": '" + tooLarge[0] + "' is too large: at most "
                                + tooLarge[1] + " (about 292 years)");
            }
            if (!flag.equals("--shutdown-delay")) { // bounded lower: shutdownDelayAndReadTimeoutHaveSaneBounds
                assertThatCode(() -> parse(with(needed, flag, prefix + "2562047h")))
                        .as(flag)
                        .doesNotThrowAnyException();
            }
        }
    }

    private static String[] with(String[] args, String... more) {
        return java.util.stream.Stream.concat(java.util.Arrays.stream(args), java.util.Arrays.stream(more))
                .toArray(String[]::new);
    }

    /**
     * A stop that waits an hour, or a body timeout of days, is a typo rather than a wish: both are bounded (the
     * shutdown delay as the operator bounds it), and the read timeout, a number, refuses what a long cannot hold
     * by the same words.
     */
    @Test
    void shutdownDelayAndReadTimeoutHaveSaneBounds() throws Exception {
        assertThat(IndexerCli.parse(new String[] {"--shutdown-delay", "5m"}, Map.of())
                        .shutdownDelay())
                .hasMinutes(5);
        for (String tooLong : List.of("301s", "6m", "2562047h")) {
            assertThatThrownBy(() -> IndexerCli.parse(new String[] {"--shutdown-delay", tooLong}, Map.of()))
                    .isInstanceOf(ConfigException.class)
                    .hasMessage("invalid value for --shutdown-delay: '" + tooLong + "' is too large: at most 5m");
        }
        assertThat(parse("--request-read-timeout-ms", "3600000").limits().requestReadTimeout())
                .hasHours(1);
        assertThat(parse("--request-read-timeout-ms", "250").limits().requestReadTimeout())
                .hasMillis(250);
        assertThat(parse().limits().requestReadTimeout()).hasSeconds(30);
        for (String tooLong : List.of("3600001", "9223372036854775807", "99999999999999999999")) {
            assertThatThrownBy(() -> parse("--request-read-timeout-ms", tooLong))
                    .isInstanceOf(ConfigException.class)
                    .hasMessage("invalid value for --request-read-timeout-ms: " + tooLong
                            + " is too large: at most 3600000 (an hour)");
        }
        assertThat(parse("--dump-stall-timeout-ms", "3600000").limits().dumpStallTimeout())
                .hasHours(1);
        assertThatThrownBy(() -> parse("--dump-stall-timeout-ms", "9223372036854775807"))
                .isInstanceOf(ConfigException.class)
                .hasMessage("invalid value for --dump-stall-timeout-ms: 9223372036854775807"
                        + " is too large: at most 3600000 (an hour)");
        assertThatThrownBy(() -> parse("--request-read-timeout-ms", "-99999999999999999999"))
                .hasMessage("invalid value for --request-read-timeout-ms: -99999999999999999999 (expected at least 1)");
        assertThatThrownBy(() -> parse("--request-read-timeout-ms", "30s"))
                .hasMessage("invalid value for --request-read-timeout-ms: '30s' is not a whole number of ms");
    }

    /**
     * An empty value is refused by its flag: InetAddress reads an empty host as the loopback address, an empty path
     * is the working directory (snapshots written there), an empty --block-ttl was no TTL at all.
     */
    @Test
    void anEmptyValueIsRefusedByItsFlag() {
        for (String flag : List.of(
                "--host",
                "--block-ttl",
                "--snapshot-dir",
                "--access-log",
                "--auth-token-file",
                "--tls-ca-file",
                "--peers-dns",
                "--shutdown-delay",
                "--request-read-timeout-ms")) {
            for (String empty : List.of("", " ")) {
                assertThatThrownBy(() -> parse(flag, empty))
                        .as(flag)
                        .isInstanceOf(ConfigException.class)
                        .hasMessage("invalid value for " + flag
                                + ": empty (give a value, or leave the flag out for its default)");
            }
        }
        assertThatThrownBy(() -> parse("--block-ttl=")).hasMessageStartingWith("invalid value for --block-ttl: empty");
    }

    /** Dynamo's lists read an empty value as no entries, and its names may be empty: as there, not an error. */
    @Test
    void dynamoFlagsKeepTheirEmptyValues() throws Exception {
        assertThat(parse("--peers", "").peers()).isEmpty();
        assertThat(parse("--peers", " , ").peers()).isEmpty();
        assertThat(parse("--block-size", "16", "--workers", "").workers()).isEmpty();
        assertThat(parse("--model-name", "").modelName()).isEmpty();
        assertThat(parse("--routing-group", "").tenantId()).isEmpty();
    }

    /** The names of the --workers are checked as /register checks them. */
    @Test
    void aNameRegisterWouldRefuseIsRefusedByItsFlag() throws Exception {
        assertThatThrownBy(() -> parse("--model-name", "x".repeat(257)))
                .isInstanceOf(ConfigException.class)
                .hasMessage("invalid value for --model-name: 257 characters; the limit is 256");
        assertThatThrownBy(() -> parse("--tenant-id", "a\tb"))
                .hasMessage("invalid value for --tenant-id: the control character U+0009 at character 1 is not"
                        + " allowed");
        assertThat(parse("--model-name", "meta-llama/Llama-3.1-8B-Instruct").modelName())
                .isEqualTo("meta-llama/Llama-3.1-8B-Instruct");
    }

    @Test
    void peersDnsIsANameAndAPort() throws Exception {
        assertThat(parse().peersDns()).isNull();
        assertThat(parse().recoversFromPeers()).isFalse();
        IndexerConfig c = parse("--peers-dns", "kv-indexer-peers.ns.svc.cluster.local:8090");
        assertThat(c.peersDns()).isEqualTo(new PeerDiscovery.Target("kv-indexer-peers.ns.svc.cluster.local", 8090));
        assertThat(c.recoversFromPeers()).isTrue();
        assertThat(c.peers()).isEmpty();
        assertThatThrownBy(() -> parse("--peers-dns", "kv-indexer-peers"))
                .isInstanceOf(ConfigException.class)
                .hasMessage("invalid value for --peers-dns: `kv-indexer-peers`: expected <name>:<port>");
        assertThatThrownBy(() -> parse("--peers-dns", "peers:70000"))
                .hasMessage("invalid value for --peers-dns: `peers:70000`: port must be 1..65535");
    }

    @Test
    void workersNeedBlockSize() {
        assertThatThrownBy(() -> parse("--workers", "1=tcp://h:1"))
                .isInstanceOf(ConfigException.class)
                .hasMessage("--block-size is required when --workers is specified");
    }

    @Test
    void aSnapshotIntervalNeedsASnapshotDir() throws Exception {
        assertThatThrownBy(() -> parse("--snapshot-interval", "5s"))
                .isInstanceOf(ConfigException.class)
                .hasMessage("--snapshot-dir is required when --snapshot-interval is specified (snapshots are written"
                        + " only there)");
        assertThat(parse("--snapshot-dir", "/tmp/s", "--snapshot-interval", "5s")
                        .snapshotInterval())
                .hasSeconds(5);
        assertThat(parse().snapshotInterval()).hasSeconds(30);
    }

    /** A token from the environment never rotates: a grace without --auth-token-file would do nothing. */
    @Test
    void anAuthTokenGraceNeedsATokenFile(@TempDir Path dir) throws Exception {
        assertThatThrownBy(() -> parse("--auth-token-grace", "1m"))
                .isInstanceOf(ConfigException.class)
                .hasMessage("--auth-token-file is required when --auth-token-grace is specified (only a token file"
                        + " rotates)");
        assertThatThrownBy(() -> parse(Map.of("KV_INDEXER_AUTH_TOKEN", "t"), "--auth-token-grace", "1m"))
                .hasMessageStartingWith("--auth-token-file is required when --auth-token-grace is specified");
        Path file = Files.writeString(dir.resolve("token"), "t\n");
        IndexerConfig c = parse("--auth-token-file", file.toString(), "--auth-token-grace", "1m");
        assertThat(c.security().tokens().grace()).hasMinutes(1);
        assertThat(parse("--auth-token-file", file.toString())
                        .security()
                        .tokens()
                        .grace())
                .hasMinutes(5);
    }

    @Test
    void emptyWorkerListYieldsNoWorkers() throws Exception {
        assertThat(WorkerEntry.parseList("")).isEmpty();
        assertThat(WorkerEntry.parseList(" , ,")).isEmpty();
        assertThat(parse("--block-size", "16", "--workers", "").workers()).isEmpty();
    }

    @Test
    void workerEntryErrorsUseDynamoTexts() {
        assertThatThrownBy(() -> WorkerEntry.parseList("1"))
                .hasMessage("invalid worker entry `1`; expected worker_id[:dp_rank]=endpoint");
        assertThatThrownBy(() -> WorkerEntry.parseList("x=tcp://h:1"))
                .hasMessage("invalid worker id in `x=tcp://h:1`: invalid digit found in string");
        assertThatThrownBy(() -> WorkerEntry.parseList("1:y=tcp://h:1"))
                .hasMessage("invalid dp_rank in `1:y=tcp://h:1`: invalid digit found in string");
        assertThatThrownBy(() -> WorkerEntry.parseList("1:4294967296=tcp://h:1"))
                .hasMessage("invalid dp_rank in `1:4294967296=tcp://h:1`: number too large to fit in target type");
        assertThatThrownBy(() -> WorkerEntry.parseList("1=tcp://host"))
                .hasMessage("invalid ZMQ endpoint `tcp://host`: missing TCP port");
        assertThatThrownBy(() -> parse("--block-size", "16", "--workers", "1=udp://h:1"))
                .hasMessage("invalid value for --workers: invalid ZMQ endpoint `udp://h:1`: unsupported scheme `udp`");
        String longEntry = "1=tcp://" + "h".repeat(300) + ":1";
        assertThatThrownBy(() -> WorkerEntry.parseList(longEntry))
                .hasMessage("invalid ZMQ endpoint `tcp://" + "h".repeat(94)
                        + "...`: a TCP host of 300 characters; the limit is 253");
        assertThatThrownBy(() -> WorkerEntry.parseList("x" + longEntry))
                .hasMessage("invalid worker id in `x1=tcp://" + "h".repeat(91) + "...`: invalid digit found in string");
    }

    @Test
    void workerIdIsU64() throws Exception {
        assertThat(WorkerEntry.parseList("18446744073709551615=tcp://h:1")
                        .get(0)
                        .instanceId())
                .isEqualTo(-1L);
        assertThatThrownBy(() -> WorkerEntry.parseList("18446744073709551616=tcp://h:1"))
                .hasMessageContaining("number too large");
    }

    @Test
    void peersSplitDropEmptyAndTrim() throws Exception {
        assertThat(parse("--peers", "http://a:1, http://b:2,,").peers()).containsExactly("http://a:1", "http://b:2");
        assertThat(IndexerCli.parsePeers(null)).isEmpty();
    }

    /** The peer list keeps each exact URL once (PeerRegistry): --max-peers counts what it keeps, not repeats. */
    @Test
    void maxPeersCountsDistinctPeers() throws Exception {
        String a = "http://127.0.0.1:18398";
        assertThat(parse("--max-peers", "2", "--peers", a + "," + a + "/," + a).peers())
                .containsExactly(a, a + "/");
        assertThatThrownBy(() -> parse("--max-peers", "2", "--peers", a + "," + a + "/," + a + ",http://b:1," + a))
                .isInstanceOf(ConfigException.class)
                .hasMessage("invalid value for --peers: 3 distinct peers; the limit is 2 (--max-peers)");
    }

    @Test
    void minInitialWorkersEnv() throws Exception {
        assertThat(parse(Map.of()).minInitialWorkers()).isZero();
        assertThat(parse(Map.of("DYN_ROUTER_MIN_INITIAL_WORKERS", "")).minInitialWorkers())
                .isZero();
        assertThat(parse(Map.of("DYN_ROUTER_MIN_INITIAL_WORKERS", "0")).minInitialWorkers())
                .isZero();
        assertThat(parse(Map.of("DYN_ROUTER_MIN_INITIAL_WORKERS", "3")).minInitialWorkers())
                .isEqualTo(3);
        for (String bad : List.of("abc", " 3", "-1", "3.0", "+3")) {
            assertThatThrownBy(() -> parse(Map.of("DYN_ROUTER_MIN_INITIAL_WORKERS", bad)))
                    .isInstanceOf(ConfigException.class)
                    .hasMessageStartingWith(
                            "DYN_ROUTER_MIN_INITIAL_WORKERS must be a non-negative integer, got \"" + bad + "\": ");
        }
    }

    @Test
    void testEndpointsEnv() throws Exception {
        for (String on : List.of("1", "true", "YES", " on ")) {
            assertThat(parse(Map.of("DYN_KV_INDEXER_TEST_ENDPOINTS", on)).testEndpoints())
                    .as(on)
                    .isTrue();
        }
        for (String off : List.of("0", "false", "", "nope")) {
            assertThat(parse(Map.of("DYN_KV_INDEXER_TEST_ENDPOINTS", off)).testEndpoints())
                    .as(off)
                    .isFalse();
        }
    }

    @Test
    void badFlagsGiveOneLineNamingThem() {
        assertThatThrownBy(() -> parse("--port", "abc"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("--port")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
        assertThatThrownBy(() -> parse("--port", "70000")).hasMessageContaining("--port");
        assertThatThrownBy(() -> parse("--no-such-flag"))
                .hasMessageContaining("--no-such-flag")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
        assertThatThrownBy(() -> parse("--block-size", "-4")).hasMessageContaining("--block-size");
        assertThatThrownBy(() -> parse("--threads", "-1")).hasMessageContaining("--threads");
    }

    /** picocli's own errors say what is wrong; the line goes on with what to do: the flag meant, where flags are. */
    @Test
    void aMistypedFlagIsAnsweredWithTheFlagItResemblesAndWhereFlagsAreListed() {
        assertThatThrownBy(() -> parse("--prot", "8090"))
                .hasMessage("Unknown options: '--prot', '8090' (did you mean --port? --help lists the flags)");
        assertThatThrownBy(() -> parse("--port", "abc"))
                .hasMessage("Invalid value for option '--port': 'abc' is not an int (--help lists the flags)");
        assertThatThrownBy(() -> parse("--block-sise=16"))
                .hasMessage("Unknown option: '--block-sise=16' (did you mean --block-size? --help lists the flags)");
        assertThatThrownBy(() -> parse("--bogus")).hasMessage("Unknown option: '--bogus' (--help lists the flags)");
        assertThatThrownBy(() -> parse("help"))
                .hasMessage("Unmatched argument at index 0: 'help' (--help lists the flags)");
    }

    /** Dynamo's newer flags: the access log's three, and --routing-group, its name for what we call the tenant. */
    @Test
    void accessLogFlagsAndRoutingGroup() throws Exception {
        assertThat(parse().accessLog()).isEqualTo(AccessLogSettings.NONE);
        assertThat(parse().accessLog().enabled()).isFalse();
        IndexerConfig c = parse(
                "--access-log",
                "/var/log/kvi/access.log",
                "--trace-id-header",
                "X-Request-Id",
                "--access-log-local-time");
        assertThat(c.accessLog())
                .isEqualTo(new AccessLogSettings(Path.of("/var/log/kvi/access.log"), "X-Request-Id", true));
        assertThat(parse("--access-log", "a.log").accessLog().traceIdHeader()).isEqualTo("x-trace-id");
        assertThatThrownBy(() -> parse("--trace-id-header", "x trace"))
                .hasMessage("invalid value for --trace-id-header: `x trace` is not an HTTP header name");
        assertThatThrownBy(() -> parse("--trace-id-header", "")).hasMessageContaining("--trace-id-header");
        assertThat(parse("--routing-group", "pool-a").tenantId()).isEqualTo("pool-a");
        assertThat(parse("--tenant-id", "pool-b").tenantId()).isEqualTo("pool-b");
    }

    @Test
    void helpListsEveryFlag() throws Exception {
        String help = IndexerCli.parse(new String[] {"--help"}, Map.of()).helpText();
        assertThat(help)
                .contains(
                        "--port",
                        "--host",
                        "--threads",
                        "--block-size",
                        "--workers",
                        "--model-name",
                        "--tenant-id",
                        "--peers",
                        "--demo",
                        "--mix-cache-salt",
                        "--max-body-bytes",
                        "--block-ttl",
                        "--max-blocks-per-worker",
                        "--routing-group",
                        "--access-log",
                        "--trace-id-header",
                        "--access-log-local-time",
                        "DYN_ROUTER_MIN_INITIAL_WORKERS");
    }

    /**
     * picocli formats every description with String.format: a bare {@code %} fails it, prints a WARN on every
     * {@code --help} and leaves {@code %%} in the text; a footer line wider than its 80 columns wraps at column 0.
     */
    @Test
    void helpRendersCleanly() throws Exception {
        for (OptionSpec option :
                new CommandLine(new IndexerCli()).getCommandSpec().options()) {
            // the annotation's own text: description() hands back the raw text when formatting fails
            Option declared = ((Field) option.userObject()).getAnnotation(Option.class);
            for (String line : declared.description()) {
                String uninterpolated = line.replaceAll("\\$\\{[A-Z-]+}", "x");
                assertThatCode(() -> String.format(uninterpolated))
                        .as(option.longestName())
                        .doesNotThrowAnyException();
            }
        }
        String help = IndexerCli.parse(new String[] {"--help"}, Map.of()).helpText();
        assertThat(help.replaceAll("\\s+", " "))
                .doesNotContain("%%")
                .contains("12.5% of the heap", "90% of N", "(unset, empty or 0: no wait)");
        assertThat(help.lines()).allSatisfy(line -> assertThat(line.length()).isLessThanOrEqualTo(80));
        List<String> footer = help.lines()
                .dropWhile(line -> !line.equals("Environment:"))
                .skip(1)
                .toList();
        assertThat(footer).hasSize(19).allSatisfy(line -> assertThat(line).startsWith("  "));
    }
}

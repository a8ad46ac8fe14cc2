package io.kvindexer.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The operator's command line: defaults, every flag, --help, and a one-line error for each kind of bad input. */
class OperatorCliTest {

    private static OperatorCli.Options options(String... args) throws OperatorCli.UsageException {
        return OperatorCli.parse(args, Map.of()).options();
    }

    private static String error(Map<String, String> env, String... args) {
        try {
            OperatorCli.parse(args, env);
        } catch (OperatorCli.UsageException e) {
            return e.getMessage();
        }
        throw new AssertionError("accepted " + List.of(args) + " with " + env);
    }

    @Test
    void defaultsAndEveryFlag() throws Exception {
        assertThat(options()).isEqualTo(new OperatorCli.Options(8081, Duration.ofSeconds(30), true, Set.of()));
        assertThat(options("--probe-port", "0", "--resync-seconds=7", "--leader-election=false"))
                .isEqualTo(new OperatorCli.Options(0, Duration.ofSeconds(7), false, Set.of()));
        assertThat(options("--leader-election").leaderElection()).isTrue();
        assertThat(OperatorCli.parse(new String[0], Map.of("WATCH_NAMESPACES", " b, a ,"))
                        .options()
                        .watchNamespaces())
                .containsExactlyInAnyOrder("a", "b");
    }

    @Test
    void helpListsEveryFlagAndTheEnvironment() throws Exception {
        OperatorCli.Parsed help = OperatorCli.parse(new String[] {"--help"}, Map.of());
        assertThat(help.options()).isNull();
        assertThat(help.helpText())
                .contains("Usage: kv-indexer-operator")
                .contains("--probe-port=PORT", "--resync-seconds=SECONDS", "--leader-election")
                .contains("WATCH_NAMESPACES", "(unset or empty: all)");
        // picocli wraps a line wider than 80 columns; a footer line it wraps restarts at column 0
        assertThat(help.helpText().lines())
                .allSatisfy(line -> assertThat(line.length()).isLessThanOrEqualTo(80));
        assertThat(help.helpText()
                        .lines()
                        .dropWhile(line -> !line.equals("Environment:"))
                        .skip(1))
                .hasSize(12)
                .allSatisfy(line -> assertThat(line).startsWith("  "));
        assertThat(help.helpText()).contains("DYN_LOGGING_JSONL", "DYN_LOG ", "DYN_LOG_USE_LOCAL_TZ");
        assertThat(OperatorCli.parse(new String[] {"--version"}, Map.of()).helpText())
                .startsWith("kv-indexer-operator ");
    }

    @Test
    void badInputIsOneLineNamingTheFlagOrVariable() {
        assertThat(error(Map.of(), "--probe-port", "eighty"))
                .isEqualTo("Invalid value for option '--probe-port': 'eighty' is not an int");
        assertThat(error(Map.of(), "--probe-port", "70000"))
                .isEqualTo("invalid value for --probe-port: 70000 (expected 0..65535)");
        assertThat(error(Map.of(), "--resync-seconds", "0"))
                .isEqualTo("invalid value for --resync-seconds: 0 (expected >= 1)");
        assertThat(error(Map.of(), "--resync-seconds"))
                .contains("--resync-seconds")
                .contains("parameter");
        assertThat(error(Map.of(), "--leader-election=maybe"))
                .contains("--leader-election")
                .contains("maybe");
        assertThat(error(Map.of(), "--resync", "5")).startsWith("Unknown options: '--resync'");
        assertThat(error(Map.of("WATCH_NAMESPACES", "Prod")))
                .contains("WATCH_NAMESPACES")
                .contains("\"Prod\"");
        assertThatThrownBy(() -> OperatorCli.parse(new String[] {"--probe-port", "1", "extra"}, Map.of()))
                .isInstanceOf(OperatorCli.UsageException.class)
                .hasMessageNotContaining("\n");
    }

    /** The real entry point in its own JVM: exit status 2 and the message on stderr, no stack trace. */
    @Test
    void mainExitsWithStatusTwoAndTheMessageOnABadFlag() throws Exception {
        Result bad = runMain("--resync-seconds", "soon");
        assertThat(bad.status()).isEqualTo(2);
        assertThat(bad.stderr())
                .startsWith("kv-indexer-operator: Invalid value for option '--resync-seconds': 'soon' is not a long")
                .contains("--help")
                .doesNotContain("Exception")
                .doesNotContain("\tat ");
        Result help = runMain("--help");
        assertThat(help.status()).isZero();
        assertThat(help.stdout()).contains("--probe-port=PORT");
        Result badLog = runMain(Map.of("DYN_LOG", "info,io.kvindexer=chatty"));
        assertThat(badLog.status()).isEqualTo(2);
        assertThat(badLog.stderr().strip())
                .isEqualTo("kv-indexer-operator: DYN_LOG: unknown level \"chatty\" in \"info,io.kvindexer=chatty\""
                        + " (error, warn, info, debug, trace or off)");
    }

    private record Result(int status, String stdout, String stderr) {}

    private static Result runMain(String... args) throws IOException, InterruptedException {
        return runMain(Map.of(), args);
    }

    private static Result runMain(Map<String, String> env, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(
                ProcessHandle.current().info().command().orElse("java"),
                "-cp",
                System.getProperty("java.class.path"),
                OperatorMain.class.getName()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().putAll(env);
        Process p = pb.start();
        p.getOutputStream().close();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("operator main did not exit within 60 s");
        }
        return new Result(
                p.exitValue(),
                new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8),
                new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
    }
}

package io.kvindexer.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Runs the HTTP query harness for about a second on a trace slice so it cannot rot; no timing is asserted. */
class HttpQueryBenchSmokeTest {

    @Test
    void bothTargetsAnswerEveryRequest() throws Exception {
        HttpQueryBench bench = new HttpQueryBench();
        new CommandLine(bench)
                .parseArgs(BenchSmoke.oneRun(
                        150,
                        2,
                        400,
                        "--clients",
                        "2",
                        "--seconds",
                        "0.4",
                        "--warmup-seconds",
                        "0.1",
                        "--min-tokens",
                        "1000",
                        "--max-tokens",
                        "100000",
                        "--warmup-reps",
                        "0"));

        List<HttpQueryBench.Rep> reps = bench.runBench();

        assertThat(reps).hasSize(1);
        for (ClosedLoop.Load load : List.of(
                reps.get(0).query(),
                reps.get(0).binary(),
                reps.get(0).noop(),
                reps.get(0).binaryNoop())) {
            assertThat(load.errors()).isZero();
            assertThat(load.requests()).isPositive();
            assertThat(load.queriesPerSecond()).isPositive();
            assertThat(load.p999Ms()).isGreaterThanOrEqualTo(load.p99Ms());
            assertThat(load.p99Ms()).isGreaterThanOrEqualTo(load.p50Ms());
        }
        assertThat(reps.get(0).ingestBatchesDuringRun()).isPositive();
    }

    @Test
    void theNoOpEndpointParsesTheBodyItIsGiven() {
        JsonFactory f = new JsonFactory();
        byte[] body = BenchHttp.queryBody("m", new int[] {1, 2, -1});
        assertThat(NoopQueryServer.parseTokens(f, body)).isEqualTo(3);
        assertThat(NoopQueryServer.parseTokens(f, "{\"token_ids\":[1]}".getBytes(StandardCharsets.UTF_8)))
                .isEqualTo(-1);
        assertThat(NoopQueryServer.parseTokens(f, "[".getBytes(StandardCharsets.UTF_8)))
                .isEqualTo(-1);
        assertThat(NoopQueryServer.parseMsgpackTokens(BenchHttp.msgpackQueryBody("m", new int[] {1, 2, -1})))
                .isEqualTo(3);
        assertThat(NoopQueryServer.parseMsgpackTokens(new byte[] {(byte) 0x80})).isEqualTo(-1); // {}: no model
        assertThat(NoopQueryServer.parseMsgpackTokens(new byte[] {(byte) 0xc1})).isEqualTo(-1);
    }
}

package io.kvindexer.indexer.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class EngineSimulatorMainTest {

    @Test
    void runsAGeneratedWorkloadAndStops() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream original = System.out;
        int code;
        try {
            System.setOut(new PrintStream(out, true));
            code = new CommandLine(new EngineSimulatorMain())
                    .setCaseInsensitiveEnumValuesAllowed(true)
                    .execute(
                            "--endpoint",
                            "tcp://127.0.0.1:*",
                            "--replay-endpoint",
                            "tcp://127.0.0.1:*",
                            "--block-size",
                            "4",
                            "--rate",
                            "100000",
                            "--requests",
                            "300",
                            "--capacity-blocks",
                            "64",
                            "--format",
                            "array12");
        } finally {
            System.setOut(original);
        }
        String text = out.toString();
        assertThat(code).isZero();
        assertThat(text)
                .containsPattern("publishing on tcp://127\\.0\\.0\\.1:\\d+, replay on tcp://127\\.0\\.0\\.1:\\d+");
        assertThat(text).containsPattern("done: 300 requests, [1-9]\\d* batches");
    }

    @Test
    void rejectsAnUnknownFormat() {
        StringWriter err = new StringWriter();
        int code = new CommandLine(new EngineSimulatorMain())
                .setErr(new PrintWriter(err))
                .execute("--format", "protobuf", "--requests", "1");
        assertThat(code).isEqualTo(2);
        assertThat(err.toString()).contains("--format");
    }
}

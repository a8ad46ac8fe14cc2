package io.kvindexer.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.lang.reflect.Field;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;

/**
 * {@code bin/bench NAME --help} (CONTRIBUTING.md) prints each benchmark's flags cleanly: picocli formats every
 * description with String.format, and a bare {@code %} fails it with a WARN line per option on every --help.
 */
class BenchHelpTest {

    private static final List<BenchCommand> COMMANDS = List.of(
            new AgentTrace(),
            new ConsoleStatsBench(),
            new DecodeBench(),
            new DecoderBench(),
            new HttpQueryBench(),
            new IndexMicroBench(),
            new JeromqHandshakeBench(),
            new LongPromptBench(),
            new RecoveryBench(),
            new SeedsBench(),
            new SnapshotBench(),
            new SoakBench(),
            new TraceBench(),
            new TracingBench(),
            new ZmqIngestBench());

    @Test
    void everyDescriptionFormats() {
        for (BenchCommand command : COMMANDS) {
            String name = command.getClass().getSimpleName();
            List<OptionSpec> options = new CommandLine(command).getCommandSpec().options();
            assertThat(options).as(name).isNotEmpty();
            for (OptionSpec option : options) {
                if (!(option.userObject() instanceof Field field)) {
                    continue; // --help and --version: picocli's own text
                }
                // the annotation's own text: description() hands back the raw text when formatting fails
                for (String line : field.getAnnotation(Option.class).description()) {
                    String uninterpolated = line.replaceAll("\\$\\{[A-Z_-]+}", "x");
                    assertThatCode(() -> String.format(uninterpolated))
                            .as(name + " " + option.longestName())
                            .doesNotThrowAnyException();
                }
            }
            assertThat(new CommandLine(command).getUsageMessage()).as(name).doesNotContain("%%");
        }
    }
}

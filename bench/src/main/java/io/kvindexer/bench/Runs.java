package io.kvindexer.bench;

import picocli.CommandLine.Option;

/**
 * How many measured runs a benchmark makes ({@code --repetitions}); mixed into every benchmark that reports a median
 * so the flag, its default and its wording are declared once.
 */
final class Runs {

    @Option(names = "--repetitions", description = "measured runs; the median is reported")
    int repetitions = 3;
}

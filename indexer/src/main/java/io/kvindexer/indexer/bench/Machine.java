package io.kvindexer.indexer.bench;

import java.util.Locale;

/** What a benchmark's figures were measured on, printed first by the benchmarks that report as text. */
final class Machine {

    private Machine() {}

    /** Prints {@code bench}'s first line: the JVM version, the cores it sees and its maximum heap. */
    static void printBanner(String bench) {
        System.out.printf(
                Locale.ROOT,
                "%s: java %s, %d cpus, max heap %d MiB%n",
                bench,
                Runtime.version(),
                Runtime.getRuntime().availableProcessors(),
                Runtime.getRuntime().maxMemory() >> 20);
    }
}

package io.kvindexer.bench;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** What a benchmark's figures were measured on: the JVM version, the cores it sees and its maximum heap. */
final class Machine {

    private Machine() {}

    /** The JVM version, cores and maximum heap under the JSON names {@link TraceBench} writes in its {@code config}. */
    static Map<String, Object> toJson() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("available_processors", Runtime.getRuntime().availableProcessors());
        out.put("java_version", Runtime.version().toString());
        out.put("max_heap_bytes", Runtime.getRuntime().maxMemory());
        return out;
    }

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

package io.kvindexer.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import java.io.IOException;
import java.nio.file.Path;

/** How every benchmark writes its results: pretty-printed JSON, to a {@code --json} file and to the console. */
final class BenchJson {

    private static final ObjectWriter PRETTY = new ObjectMapper().writerWithDefaultPrettyPrinter();

    private BenchJson() {}

    /** Writes the results to {@code file}. */
    static void write(Object results, Path file) throws IOException {
        PRETTY.writeValue(file.toFile(), results);
    }

    /** Prints the results and, when {@code file} is not null ({@code --json} was given), writes them there too. */
    static void report(Object results, Path file) throws IOException {
        System.out.println(PRETTY.writeValueAsString(results));
        if (file != null) {
            write(results, file);
        }
    }
}

package io.kvindexer.bench;

import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * Where a benchmark also writes its results as JSON ({@code --json}, through {@link BenchJson}); mixed into every
 * picocli benchmark that writes them, so the flag and its wording are declared once.
 */
final class JsonFile {

    @Option(names = "--json", paramLabel = "<json>", description = "write the results here as JSON")
    Path path;
}

package io.kvindexer.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Helm installs the CRDs from the chart's own crds/ folder, so it must hold exactly the generated files of the
 * top-level crds/ (the operator module checks those against its Java classes).
 */
class ChartCrdsInSyncTest {

    private static final String FIX = "refresh both from the Java classes: mvn -pl operator -Pupdate-crds"
            + " process-classes (it writes crds/ and charts/kv-indexer-operator/crds/), then commit both";

    @Test
    void chartCrdsAreByteIdenticalCopiesOfTheGeneratedCrds() throws IOException {
        Path generated = RepoFiles.root().resolve("crds");
        Path chart = RepoFiles.chart().resolve("crds");
        List<String> expected = crdFiles(generated);
        assertThat(expected).as("generated CRDs in %s", generated).isNotEmpty();

        assertThat(crdFiles(chart)).as("CRD files in the chart; " + FIX).isEqualTo(expected);
        for (String name : expected) {
            assertThat(Files.readAllBytes(chart.resolve(name)))
                    .as("%s differs from crds/%s; %s", chart.resolve(name), name, FIX)
                    .isEqualTo(Files.readAllBytes(generated.resolve(name)));
        }
    }

    private static List<String> crdFiles(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith(".yml") || n.endsWith(".yaml") || n.endsWith(".json"))
                    .sorted()
                    .toList();
        }
    }
}

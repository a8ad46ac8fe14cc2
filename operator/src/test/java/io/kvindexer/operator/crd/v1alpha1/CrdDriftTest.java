package io.kvindexer.operator.crd.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The committed crds/ must equal what the build generates from the Java classes, byte for byte. */
class CrdDriftTest {
    private static final Path GENERATED = Path.of("target/classes/META-INF/fabric8");
    private static final Path COMMITTED = Path.of("../crds");
    private static final String FIX =
            "the committed CRDs in crds/ differ from the ones generated from the Java classes;"
                    + " refresh them with: mvn -pl operator -Pupdate-crds process-classes (or bin/run-tests -pl operator"
                    + " -Pupdate-crds), which writes crds/ and charts/kv-indexer-operator/crds/, and commit both";

    @Test
    void committedCrdsMatchTheGeneratedOnes() throws IOException {
        List<String> generated = names(GENERATED);
        assertThat(generated)
                .as("generated CRDs")
                .containsExactlyInAnyOrder("kvindexers.kvindexer.io-v1.yml", "kvworkers.kvindexer.io-v1.yml");
        assertThat(names(COMMITTED)).as(FIX).containsExactlyInAnyOrderElementsOf(generated);
        for (String name : generated) {
            assertThat(Files.readString(COMMITTED.resolve(name)))
                    .as(FIX + " (" + name + ")")
                    .isEqualTo(Files.readString(GENERATED.resolve(name)));
        }
    }

    private static List<String> names(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith(".yml"))
                    .sorted()
                    .toList();
        }
    }
}

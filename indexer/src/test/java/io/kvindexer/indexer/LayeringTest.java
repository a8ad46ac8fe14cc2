package io.kvindexer.indexer;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import com.tngtech.archunit.library.Architectures.LayeredArchitecture;
import java.util.ArrayList;
import java.util.List;

/**
 * The indexer's layering, stated once. Data flows downhill: a package may import only packages on a lower floor
 * (never one above, nor a neighbour on its own floor), so no package imports the root package and no two packages
 * import each other. A new package fails {@link #noUpwardImport} until it is given a floor here.
 */
@AnalyzeClasses(packages = LayeringTest.ROOT, importOptions = ImportOption.DoNotIncludeTests.class)
class LayeringTest {

    static final String ROOT = "io.kvindexer.indexer";

    /** Top to bottom; "" is the root package (CLI, config, app wiring). */
    static final List<List<String>> FLOORS = List.of(
            List.of(""),
            List.of("http"),
            List.of("metrics", "recovery"),
            List.of("snapshot"),
            List.of("registry", "sim", "expiry"),
            List.of("index", "ingest"),
            List.of("event", "dump"),
            List.of("hash", "json"),
            List.of("common"));

    @ArchTest
    static final ArchRule noUpwardImport = floors(ROOT, FLOORS);

    @ArchTest
    static final ArchRule noPackageCycle =
            slices().matching("io.kvindexer.(**)").should().beFreeOfCycles();

    /** The rule above is not vacuous: with the ground floor put on top, every import of common/ is upward. */
    @ArchTest
    static void anUpwardImportFailsTheRule(JavaClasses classes) {
        List<List<String>> upsideDown = new ArrayList<>(FLOORS);
        upsideDown.add(0, upsideDown.remove(upsideDown.size() - 1));
        EvaluationResult result = floors(ROOT, upsideDown).evaluate(classes);
        assertThat(result.hasViolation()).isTrue();
        assertThat(String.join("\n", result.getFailureReport().getDetails())).contains(ROOT + ".common.");
    }

    /**
     * A layered architecture with one layer per package: each may access only the layers on lower floors, and every
     * class of {@code root} must be in one.
     */
    static LayeredArchitecture floors(String root, List<List<String>> floors) {
        LayeredArchitecture layers = layeredArchitecture().consideringOnlyDependenciesInLayers();
        for (List<String> floor : floors) {
            for (String p : floor) {
                layers = layers.layer(name(p)).definedBy(p.isEmpty() ? root : root + "." + p + "..");
            }
        }
        for (int i = 0; i < floors.size(); i++) {
            String[] below = floors.subList(i + 1, floors.size()).stream()
                    .flatMap(List::stream)
                    .map(LayeringTest::name)
                    .toArray(String[]::new);
            for (String p : floors.get(i)) {
                layers = below.length == 0
                        ? layers.whereLayer(name(p)).mayNotAccessAnyLayer()
                        : layers.whereLayer(name(p)).mayOnlyAccessLayers(below);
            }
        }
        return layers.ensureAllClassesAreContainedInArchitecture();
    }

    private static String name(String pkg) {
        return pkg.isEmpty() ? "root" : pkg;
    }
}

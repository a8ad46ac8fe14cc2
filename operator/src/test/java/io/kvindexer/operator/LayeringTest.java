package io.kvindexer.operator;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * The operator's layering, stated once. Top to bottom: the root package (main, flags, shutdown); the two
 * controllers {@code indexer} and {@code worker}; {@code reconcile}, what both controllers share; then
 * {@code observability} and {@code common} (names and labels); at the bottom the {@code client} of the indexer's
 * HTTP API and the {@code crd} classes. A package may access only the floors below its own, never its neighbours
 * nor anything above (so nothing imports the root package). A new package fails until it is given a layer here.
 */
@AnalyzeClasses(packages = "io.kvindexer.operator", importOptions = ImportOption.DoNotIncludeTests.class)
class LayeringTest {

    @ArchTest
    static final ArchRule noUpwardImport = layeredArchitecture()
            .consideringOnlyDependenciesInLayers()
            .layer("root")
            .definedBy("io.kvindexer.operator")
            .layer("indexer")
            .definedBy("io.kvindexer.operator.indexer..")
            .layer("worker")
            .definedBy("io.kvindexer.operator.worker..")
            .layer("reconcile")
            .definedBy("io.kvindexer.operator.reconcile..")
            .layer("observability")
            .definedBy("io.kvindexer.operator.observability..")
            .layer("common")
            .definedBy("io.kvindexer.operator.common..")
            .layer("client")
            .definedBy("io.kvindexer.operator.client..")
            .layer("crd")
            .definedBy("io.kvindexer.operator.crd..")
            .whereLayer("indexer")
            .mayOnlyAccessLayers("reconcile", "observability", "common", "client", "crd")
            .whereLayer("worker")
            .mayOnlyAccessLayers("reconcile", "observability", "common", "client", "crd")
            .whereLayer("reconcile")
            .mayOnlyAccessLayers("observability", "common", "client", "crd")
            .whereLayer("observability")
            .mayOnlyAccessLayers("client", "crd")
            .whereLayer("common")
            .mayOnlyAccessLayers("client", "crd")
            .whereLayer("client")
            .mayNotAccessAnyLayer()
            .whereLayer("crd")
            .mayNotAccessAnyLayer()
            .ensureAllClassesAreContainedInArchitecture();

    @ArchTest
    static final ArchRule noPackageCycle =
            slices().matching("io.kvindexer.(**)").should().beFreeOfCycles();
}

package io.kvindexer.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * bin/run-indexer builds the jar again exactly when something that goes into it or its libs/ changed: the main
 * sources and poms of the indexer and of the modules it depends on (logging, tls). The script runs on a copy of
 * the repository's layout with a fake JDK and a fake Maven that write down how they were called.
 */
class RunIndexerScriptTest {

    private static final Instant SOURCES = Instant.parse("2026-01-01T00:00:00Z");
    private static final Instant JAR = Instant.parse("2026-01-02T00:00:00Z");
    private static final Instant EDIT = Instant.parse("2026-01-03T00:00:00Z");

    @TempDir
    Path tmp;

    private ScriptSandbox sandbox;
    private Path repo;

    @BeforeEach
    void layout() throws IOException {
        sandbox = ScriptSandbox.of(tmp, "bin/run-indexer", "bin/find-jdk");
        repo = sandbox.repo();
        for (String file : List.of(
                "pom.xml",
                "indexer/pom.xml",
                "indexer/src/main/java/Main.java",
                "indexer/src/test/java/MainTest.java",
                "logging/pom.xml",
                "logging/src/main/java/Log.java",
                "tls/pom.xml",
                "tls/src/main/java/Tls.java")) {
            touch(file, SOURCES);
        }
        touch("indexer/target/kv-indexer.jar", JAR);
        // find also compares the folders, made just now: they date from before the jar, as in a built checkout
        try (Stream<Path> all = Files.walk(repo)) {
            for (Path dir : all.filter(Files::isDirectory).toList()) {
                Files.setLastModifiedTime(dir, FileTime.from(SOURCES));
            }
        }
    }

    @Test
    void anUnchangedTreeIsNotBuiltAgain() throws Exception {
        String err = runIndexer();

        assertThat(err).doesNotContain("building");
    }

    @Test
    void aChangeToAModuleTheIndexerDependsOnBuildsAgain() throws Exception {
        touch("logging/src/main/java/Log.java", EDIT);
        assertThat(runIndexer()).contains("building indexer/target/kv-indexer.jar", "mvn -B -ntp -q -pl indexer -am");

        touch("indexer/target/kv-indexer.jar", EDIT.plusSeconds(60));
        touch("tls/pom.xml", EDIT.plusSeconds(120));
        assertThat(runIndexer()).contains("building indexer/target/kv-indexer.jar");
    }

    @Test
    void aChangeToTheIndexersMainSourcesBuildsAgainAndOneToItsTestsDoesNot() throws Exception {
        touch("indexer/src/test/java/MainTest.java", EDIT);
        assertThat(runIndexer()).as("a test is not in the jar").doesNotContain("building");

        touch("indexer/src/main/java/Main.java", EDIT);
        assertThat(runIndexer()).contains("building indexer/target/kv-indexer.jar");
    }

    /**
     * Started from another directory, the indexer runs in that one: a relative path among its flags (--access-log,
     * --snapshot-dir, --auth-token-file) means the caller's file, where the script's cd to the repository had read
     * tokens from the repository and written access logs into the source tree. The build still runs at the root.
     */
    @Test
    void theIndexerRunsInTheCallersDirectory() throws Exception {
        Path elsewhere = Files.createDirectories(tmp.resolve("elsewhere"));
        touch("indexer/src/main/java/Main.java", EDIT);

        ScriptSandbox.Result r = sandbox.run(elsewhere, "bin/run-indexer", "--version");
        assertThat(r.stderr()).contains("mvn -B -ntp -q -pl indexer -am package -DskipTests in " + repo);
        assertThat(r.stdout()).endsWith(" in " + elsewhere + "\n");
    }

    /** Runs bin/run-indexer --version in the copy; returns its standard error (where the build is announced). */
    private String runIndexer() throws IOException, InterruptedException {
        ScriptSandbox.Result r = sandbox.run(repo, "bin/run-indexer", "--version");
        assertThat(r.exit()).as(r.stderr()).isZero();
        assertThat(r.stdout())
                .as("the jar is started")
                .contains("-jar " + repo.resolve("indexer/target/kv-indexer.jar") + " --version");
        return r.stderr();
    }

    private void touch(String file, Instant when) throws IOException {
        Path f = repo.resolve(file);
        Files.createDirectories(f.getParent());
        if (!Files.exists(f)) {
            Files.writeString(f, "", StandardCharsets.UTF_8);
        }
        Files.setLastModifiedTime(f, FileTime.from(when));
    }
}

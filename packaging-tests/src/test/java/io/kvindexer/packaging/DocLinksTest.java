package io.kvindexer.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * No signpost in the repository leads nowhere: every relative link (and #anchor) of every tracked Markdown file
 * resolves, every doc section cited from code, Dockerfiles, YAML or prose exists, and every test or benchmark class
 * that docs, Dockerfiles or scripts name is declared (see {@link DocLinks}). A rename that leaves one behind fails
 * here, naming the file and line.
 */
class DocLinksTest {

    /** The fixtures spell ".md" apart so that this file itself cites nothing. */
    private static final String MD = ".md";

    @TempDir
    Path tmp;

    /** The repository's problems, found once for the three tests that sort them. */
    private static List<DocLinks.Problem> repository;

    @BeforeAll
    static void checkTheRepository() {
        repository = new DocLinks(RepoFiles.root()).check();
    }

    @Test
    void everyRelativeLinkAndAnchorInTheMarkdownResolves() {
        assertThat(kind("link ")).as("broken Markdown links (file:line)").isEmpty();
    }

    @Test
    void everyCitedDocSectionExists() {
        assertThat(kind("cites ")).as("stale doc citations (file:line)").isEmpty();
    }

    @Test
    void everyTestOrBenchmarkNamedOutsideJavaExists() {
        assertThat(kind("names "))
                .as("test or benchmark names that no class has (file:line)")
                .isEmpty();
    }

    private static List<DocLinks.Problem> kind(String prefix) {
        return repository.stream().filter(p -> p.message().startsWith(prefix)).toList();
    }

    @Test
    void theReadmeAndTheReferenceAreCovered() {
        List<Path> files = new DocLinks(RepoFiles.root()).files();
        Path root = RepoFiles.root();
        assertThat(files)
                .contains(
                        root.resolve("README" + MD),
                        root.resolve("docs/api" + MD),
                        root.resolve("docs/configuration" + MD),
                        root.resolve("indexer/Dockerfile"),
                        root.resolve("indexer/src/main/java/io/kvindexer/indexer/common/StorageTier.java"));
    }

    @Test
    void brokenLinksAnchorsAndCitationsAreReportedWithFileAndLine() throws IOException {
        Files.createDirectories(tmp.resolve("docs"));
        Files.writeString(tmp.resolve("docs/guide" + MD), """
                # Guide

                ## Storage media

                | term | meaning |
                |---|---|
                | tiered match | a run across tiers |

                ### Shards (issue 11)

                - **Status writes (revised).** One path.

                ```
                [inside a fence](nowhere%s) is code, not a link
                ```
                """.formatted(MD));
        Files.writeString(tmp.resolve("README" + MD), """
                # Title

                See [the guide](docs/guide%1$s#storage-media) and [the top](#title).
                A [missing file](docs/gone%1$s) and `[code](not-a-link%1$s)`.
                A [missing anchor](docs/guide%1$s#replay).
                """.formatted(MD));
        Files.createDirectories(tmp.resolve("src"));
        Files.writeString(tmp.resolve("src/Frames.java"), """
                /**
                 * Frames (see {@code docs/guide%1$s}, "Storage media"), also guide%1$s, "tiered match";
                 * the replay (see {@code docs/guide%1$s},
                 * "Replay") and guide%1$s, Where we differ; fine: guide%1$s § Storage media, guide%1$s, "Shards",
                 * guide%1$s, "Status writes".
                 * Gone: spec%1$s, Appendix A.
                 */
                class Frames {}
                """.formatted(MD));
        Files.writeString(
                tmp.resolve("Dockerfile"),
                "# see docs/guide" + MD + ", \"KV events\"\n# FramesTest lays it out, *FramesTest too\n"
                        + "FROM scratch\n");

        List<String> problems = new DocLinks(tmp)
                .check().stream().map(DocLinks.Problem::toString).toList();

        assertThat(problems)
                .containsExactlyInAnyOrder(
                        "README" + MD + ":4: link docs/gone" + MD + ": no such file docs/gone" + MD,
                        "README" + MD + ":5: link docs/guide" + MD + "#replay: docs/guide" + MD
                                + " has no heading with anchor #replay",
                        "src/Frames.java:3: cites docs/guide" + MD + ", \"Replay\": docs/guide" + MD
                                + " has no such section",
                        "src/Frames.java:4: cites guide" + MD + ", \"Where we differ\": docs/guide" + MD
                                + " has no such section",
                        "src/Frames.java:6: cites spec" + MD + ", which is not in the repository",
                        "Dockerfile:1: cites docs/guide" + MD + ", \"KV events\": docs/guide" + MD
                                + " has no such section",
                        "Dockerfile:2: names FramesTest, which no Java file declares");
    }

    @Test
    void anchorsAreGitHubs() {
        assertThat(DocLinks.slug("`GET /health`")).isEqualTo("get-health");
        assertThat(DocLinks.slug("Dynamo generations (G1, G2, G3)")).isEqualTo("dynamo-generations-g1-g2-g3");
        assertThat(DocLinks.slug("The operator's words")).isEqualTo("the-operators-words");
        assertThat(DocLinks.slug("ADR 0001 — The prefix index")).isEqualTo("adr-0001--the-prefix-index");
        assertThat(DocLinks.slug("Web console endpoints (`ConsoleStatsBench`)"))
                .isEqualTo("web-console-endpoints-consolestatsbench");
        assertThat(DocLinks.slug("RBAC: exactly what the operator is granted"))
                .isEqualTo("rbac-exactly-what-the-operator-is-granted");
    }
}

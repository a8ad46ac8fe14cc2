package io.kvindexer.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.IndexerCli;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The flags table of docs/configuration.md lists exactly the flags the indexer's {@code --help} prints: a new flag
 * is documented where users look for it, and a removed one leaves the table with it.
 */
class ConfigurationDocsTest {

    static final String DOC = "docs/configuration.md";
    private static final Pattern FLAG = Pattern.compile("(?<![\\w-])--[a-z][a-z0-9-]*");

    @Test
    void theFlagsTableListsExactlyTheFlagsOfHelp() throws Exception {
        String help = IndexerCli.parse(new String[] {"--help"}, Map.of()).helpText();
        assertThat(help).as("--help output").contains("--port");
        Set<String> offered = new TreeSet<>();
        for (String line : help.lines().toList()) {
            // an option line starts with its names; descriptions may mention other flags, which are not new ones
            Matcher m = FLAG.matcher(line.strip().split("\\s{2,}")[0]);
            m.results().forEach(r -> offered.add(r.group()));
        }
        assertThat(documentedFlags()).isEqualTo(offered);
    }

    /** The flags named in the first column of the table under "## Flags". */
    static Set<String> documentedFlags() {
        List<String> lines =
                RepoFiles.read(RepoFiles.root().resolve(DOC)).lines().toList();
        int start = lines.indexOf("## Flags");
        assertThat(start).as("\"## Flags\" in %s", DOC).isNotNegative();
        Set<String> flags = new TreeSet<>();
        for (String line : lines.subList(start + 1, lines.size())) {
            if (line.startsWith("## ")) {
                break;
            }
            if (line.startsWith("| `")) {
                FLAG.matcher(line.split("\\|")[1]).results().forEach(r -> flags.add(r.group()));
            }
        }
        assertThat(flags).as("flags documented in %s", DOC).isNotEmpty();
        return flags;
    }
}

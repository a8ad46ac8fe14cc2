package io.kvindexer.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.IndexerCli;
import io.kvindexer.operator.OperatorCli;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Each flags table lists exactly the flags its program's {@code --help} prints: the indexer's in
 * docs/configuration.md, the operator's in docs/kubernetes.md. A new flag is documented where users look for it,
 * and a removed one leaves the table with it.
 */
class FlagsDocsTest {

    private static final Pattern FLAG = Pattern.compile("(?<![\\w-])--[a-z][a-z0-9-]*");

    @Test
    void theIndexerFlagsTableListsExactlyTheFlagsOfHelp() throws Exception {
        String help = IndexerCli.parse(new String[] {"--help"}, Map.of()).helpText();
        assertThat(documentedFlags("docs/configuration.md", "## Flags")).isEqualTo(offered(help, "--port"));
    }

    @Test
    void theOperatorFlagsTableListsExactlyTheFlagsOfHelp() throws Exception {
        String help = OperatorCli.parse(new String[] {"--help"}, Map.of()).helpText();
        assertThat(documentedFlags("docs/kubernetes.md", "### Operator flags"))
                .isEqualTo(offered(help, "--probe-port"));
    }

    /** The flags at the start of the option lines of a picocli usage text (descriptions may name other flags). */
    private static Set<String> offered(String help, String known) {
        assertThat(help).as("--help output").contains(known);
        Set<String> flags = new TreeSet<>();
        for (String line : help.lines().toList()) {
            String names = line.strip().split("\\s{2,}")[0];
            if (names.startsWith("-")) {
                FLAG.matcher(names).results().forEach(r -> flags.add(r.group()));
            }
        }
        return flags;
    }

    /** The flags named in the first column of the first table under {@code heading}. */
    static Set<String> documentedFlags(String doc, String heading) {
        Set<String> flags = new TreeSet<>();
        for (String[] cells : RepoFiles.tableAfter(doc, heading)) {
            FLAG.matcher(cells[1]).results().forEach(r -> flags.add(r.group()));
        }
        assertThat(flags).as("flags documented under %s in %s", heading, doc).isNotEmpty();
        return flags;
    }
}

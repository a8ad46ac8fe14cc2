package io.kvindexer.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The RBAC rules as the docs state them (docs/kubernetes.md, the tables after the markers
 * {@code <!-- rbac:watch -->} and {@code <!-- rbac:lease -->}), flattened to "group|resource|verb" triples.
 * The chart test compares rendered rules against these, so the docs and the chart cannot drift apart.
 */
final class DocumentedRbac {

    static final String DOC = "docs/kubernetes.md";
    private static final Pattern CODE = Pattern.compile("`([^`]*)`");

    private DocumentedRbac() {}

    static Set<String> watchRules() {
        return table("<!-- rbac:watch -->");
    }

    /** The rules the Helm value {@code certManager.enabled} adds to the watch rules. */
    static Set<String> certManagerRules() {
        return table("<!-- rbac:cert-manager -->");
    }

    static Set<String> leaseRules() {
        return table("<!-- rbac:lease -->");
    }

    /** Rows "| `group` | `res`, `res` | `verb`, `verb` | why |"; the core group is written `""`. */
    private static Set<String> table(String marker) {
        Set<String> triples = new TreeSet<>();
        for (String[] cells : RepoFiles.tableAfter(DOC, marker)) {
            List<String> groups = codes(cells[1]);
            List<String> resources = codes(cells[2]);
            List<String> verbs = codes(cells[3]);
            for (String g : groups) {
                for (String r : resources) {
                    for (String v : verbs) {
                        triples.add(("\"\"".equals(g) ? "" : g) + "|" + r + "|" + v);
                    }
                }
            }
        }
        assertThat(triples).as("rules documented after %s", marker).isNotEmpty();
        return triples;
    }

    private static List<String> codes(String cell) {
        Matcher m = CODE.matcher(cell);
        return m.results().map(r -> r.group(1)).toList();
    }
}

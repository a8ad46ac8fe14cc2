package io.kvindexer.operator.support;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The rules docs/kubernetes.md grants the operator in a watched namespace (the table after {@code <!-- rbac:watch
 * -->}, which the chart renders and packaging-tests' HelmChartTest checks) as "group|resource|verb", and the check
 * that the requests a test's mock API server received stay within them: the mock enforces no RBAC, a real API
 * server answers 403 to anything else.
 */
public final class GrantedRbac {
    private static final Path DOC = Path.of("../docs/kubernetes.md");
    private static final Pattern CODE = Pattern.compile("`([^`]*)`");

    private GrantedRbac() {}

    /** The "group|resource|verb" triples of the watched-namespace table. */
    public static Set<String> watchRules() {
        List<String> lines;
        try {
            lines = Files.readAllLines(DOC);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Set<String> rules = new TreeSet<>();
        int at = lines.indexOf("<!-- rbac:watch -->");
        assertThat(at).as("the rbac:watch marker in %s", DOC).isNotNegative();
        for (int i = at + 3; i < lines.size() && lines.get(i).startsWith("|"); i++) {
            String[] cells = lines.get(i).split("\\|");
            for (String g : codes(cells[1])) {
                for (String r : codes(cells[2])) {
                    for (String v : codes(cells[3])) {
                        rules.add(("\"\"".equals(g) ? "" : g) + "|" + r + "|" + v);
                    }
                }
            }
        }
        assertThat(rules).as("rules after the rbac:watch marker").isNotEmpty();
        return rules;
    }

    /** Drops what {@code server} has recorded so far (the test's own setup). */
    public static void forget(KubernetesMockServer server) {
        taken(server);
    }

    /** Every request {@code server} recorded since the last look is one the documented rules grant. */
    public static void assertGranted(KubernetesMockServer server) {
        assertGranted(server, null);
    }

    /** The same for the requests sent with User-Agent {@code agent} (null: all). */
    public static void assertGranted(KubernetesMockServer server, String agent) {
        Set<String> granted = watchRules();
        List<String> asked = taken(server).stream()
                .filter(r -> agent == null || agent.equals(r.getHeader("User-Agent")))
                .map(r -> rule(r.getMethod(), r.getPath()))
                .filter(r -> r != null)
                .toList();
        assertThat(asked).as("requests the operator made").isNotEmpty();
        Set<String> beyond =
                asked.stream().filter(r -> !granted.contains(r)).collect(Collectors.toCollection(TreeSet::new));
        assertThat(beyond).as("requests beyond the documented RBAC").isEmpty();
    }

    /**
     * "group|resource|verb" of a request, e.g. {@code PATCH /api/v1/namespaces/ns/secrets/kv-tls} is
     * "|secrets|patch"; null for discovery ({@code /api}, {@code /apis/<group>/<version>}), which needs no rule.
     */
    static String rule(String method, String path) {
        String p = path.contains("?") ? path.substring(0, path.indexOf('?')) : path;
        String query = path.contains("?") ? path.substring(path.indexOf('?')) : "";
        List<String> s = new ArrayList<>(List.of(p.replaceFirst("^/", "").split("/")));
        String group;
        if (s.getFirst().equals("api") && s.size() > 2) {
            group = "";
            s = s.subList(2, s.size());
        } else if (s.getFirst().equals("apis") && s.size() > 3) {
            group = s.get(1);
            s = s.subList(3, s.size());
        } else {
            return null;
        }
        if (s.getFirst().equals("namespaces") && s.size() > 2) {
            s = s.subList(2, s.size());
        }
        String resource = s.get(0) + (s.size() > 2 ? "/" + s.get(2) : "");
        boolean named = s.size() > 1;
        String verb = switch (method) {
            case "GET" -> named ? "get" : query.contains("watch=true") ? "watch" : "list";
            case "POST" -> "create";
            case "PUT" -> "update";
            case "PATCH" -> "patch";
            case "DELETE" -> named ? "delete" : "deletecollection";
            default -> method;
        };
        return group + "|" + resource + "|" + verb;
    }

    private static List<RecordedRequest> taken(KubernetesMockServer server) {
        List<RecordedRequest> all = new ArrayList<>();
        try {
            for (RecordedRequest r; (r = server.takeRequest(1, TimeUnit.MILLISECONDS)) != null; ) {
                all.add(r);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        return all;
    }

    private static List<String> codes(String cell) {
        Matcher m = CODE.matcher(cell);
        return m.results().map(r -> r.group(1)).toList();
    }
}

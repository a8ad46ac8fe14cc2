package io.kvindexer.operator.observability;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.operator.reconcile.ControllerServices;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The Event reasons docs/kubernetes.md lists ("The operator process") are the ones the operator writes: what a user
 * reads in {@code kubectl describe} is looked up there. The list ends at its first ';' (what follows explains).
 */
class EventReasonsDocTest {
    private static final Pattern WRITTEN = Pattern.compile("\\.(?:warning|normal)\\(\\s*\\w+,\\s*\"([A-Za-z]+)\"");
    private static final Pattern LISTED = Pattern.compile("It writes Kubernetes Events on the resources \\(([^)]*)\\)");

    @Test
    void theDocsListEveryReasonTheOperatorWrites() throws IOException {
        Set<String> written = new TreeSet<>(
                Set.of(ControllerServices.INVALID_SPEC, ControllerServices.UNREADABLE, EventRecorder.UNKNOWN_FIELDS));
        try (Stream<Path> sources = Files.walk(Path.of("src/main/java"))) {
            for (Path p : sources.filter(f -> f.toString().endsWith(".java")).toList()) {
                Matcher m = WRITTEN.matcher(Files.readString(p));
                while (m.find()) {
                    written.add(m.group(1));
                }
            }
        }
        Matcher listed = LISTED.matcher(
                Files.readString(Path.of("../docs/kubernetes.md")).replaceAll("\\s+", " "));
        assertThat(listed.find())
                .as("the list of Event reasons in docs/kubernetes.md")
                .isTrue();
        Set<String> documented = Arrays.stream(listed.group(1).split(";")[0].split(","))
                .map(String::strip)
                .collect(Collectors.toCollection(TreeSet::new));
        assertThat(documented).isEqualTo(written);
    }
}

package io.kvindexer.packaging;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/** Where the shipped files live (this module tests files outside itself) and how to read manifests. */
final class RepoFiles {

    static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();
    private static final Pattern DOCUMENT_SEPARATOR = Pattern.compile("(?m)^---\\s*$");

    private RepoFiles() {}

    /** The repository root: the first ancestor of the working directory holding charts/ and the parent pom. */
    static Path root() {
        Path dir = Path.of("").toAbsolutePath();
        for (Path p = dir; p != null; p = p.getParent()) {
            if (Files.isDirectory(p.resolve("charts"))
                    && Files.isRegularFile(p.resolve("pom.xml"))
                    && Files.isDirectory(p.resolve("packaging-tests"))) {
                return p;
            }
        }
        throw new IllegalStateException("repository root not found above " + dir);
    }

    static Path chart() {
        return root().resolve("charts/kv-indexer-operator");
    }

    static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The body rows of the first Markdown table after the line {@code marker} (a comment marker or a heading) in a
     * doc, split into cells ({@code cells[1]} is the first column); the header and separator rows are left out.
     */
    static List<String[]> tableAfter(String doc, String marker) {
        List<String> lines = read(root().resolve(doc)).lines().toList();
        int start = lines.indexOf(marker);
        if (start < 0) {
            throw new AssertionError("no line \"" + marker + "\" in " + doc);
        }
        List<String[]> rows = new ArrayList<>();
        boolean inTable = false;
        for (String line : lines.subList(start + 1, lines.size())) {
            if (!line.startsWith("|")) {
                if (inTable) {
                    break;
                }
                continue;
            }
            if (inTable && !line.startsWith("|---")) {
                rows.add(line.split("\\|"));
            }
            inTable = true; // the first row is the header
        }
        if (rows.isEmpty()) {
            throw new AssertionError("no table rows after \"" + marker + "\" in " + doc);
        }
        return rows;
    }

    /** The YAML documents of a multi-document stream, without empty or comment-only ones. */
    static List<String> documents(String yaml) {
        List<String> docs = new ArrayList<>();
        for (String doc : DOCUMENT_SEPARATOR.split(yaml)) {
            boolean hasContent = doc.lines().map(String::strip).anyMatch(l -> !l.isEmpty() && !l.startsWith("#"));
            if (hasContent) {
                docs.add(doc);
            }
        }
        return docs;
    }

    /** Parses every document as a Kubernetes object (typed when fabric8 knows the kind, generic otherwise). */
    static List<HasMetadata> objects(String yaml) {
        return documents(yaml).stream()
                .map(d -> (HasMetadata) SERIALIZATION.unmarshal(d))
                .toList();
    }
}

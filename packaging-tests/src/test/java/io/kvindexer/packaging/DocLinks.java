package io.kvindexer.packaging;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Finds the signposts in a repository that lead nowhere: a relative Markdown link to a file that does not exist or
 * to an {@code #anchor} that no heading of the target produces (GitHub's slugs), and a section of a doc cited from
 * code, a Dockerfile, a YAML file or prose ({@code docs/compatibility.md, "Storage media"},
 * {@code compatibility.md, Hashing}, {@code compatibility.md § Metrics}) that the doc does not have, and a test or
 * benchmark class named outside Java that no longer exists. Each problem names its file and line.
 */
final class DocLinks {

    /** One broken signpost: where it is (repository-relative path, 1-based line) and what is wrong. */
    record Problem(String file, int line, String message) {
        @Override
        public String toString() {
            return file + ":" + line + ": " + message;
        }
    }

    private static final String MD = ".md";
    private static final Pattern FENCE = Pattern.compile("^\\s*(```|~~~)");
    private static final Pattern HEADING = Pattern.compile("^ {0,3}(#{1,6})\\s+(.*?)\\s*#*\\s*$");
    private static final Pattern INLINE_CODE = Pattern.compile("`[^`]*`");
    private static final Pattern LINK = Pattern.compile("!?\\[(?:[^\\[\\]]|\\[[^\\]]*\\])*\\]\\(\\s*<?([^)\\s>]+)>?");
    private static final Pattern REFERENCE = Pattern.compile("^\\s*\\[[^\\]]+\\]:\\s*(\\S+)");
    private static final Pattern HTML_ANCHOR = Pattern.compile("<a\\s+(?:id|name)=\"([^\"]+)\"");
    private static final Pattern BOLD_LEAD = Pattern.compile("^\\s*(?:[-*]\\s+)?\\*\\*([^*]+)\\*\\*");
    private static final Pattern TABLE_TERM = Pattern.compile("^\\|\\s*`?([^|`]+?)`?\\s*\\|");
    private static final Pattern SCHEME = Pattern.compile("^[a-zA-Z][a-zA-Z0-9+.-]*:|^//");
    /** A cited doc, then a quoted section, or an unquoted one after a comma, or one after a section sign. */
    private static final Pattern CITATION =
            Pattern.compile("([\\w./-]*[\\w-]\\.md)\\}?(?:\\s*,\\s*\"([^\"]{1,120})\"|\\s+\"([^\"]{1,120})\""
                    + "|\\s*,\\s*(\\p{Lu}[^;:()]{0,120})|\\s*§\\s*([^;:()]{1,120}))");

    private static final Pattern TEST_NAME = Pattern.compile("(?<![\\w*@.])([A-Z][A-Za-z0-9]*(?:Test|Bench))\\b");
    private static final Pattern COMMENT_MARKER = Pattern.compile("^\\s*(?:/\\*\\*|/\\*|\\*/|\\*|//|#)?\\s?");
    private static final List<String> CODE_SUFFIXES = List.of(".java", ".js", ".yaml", ".yml", MD, ".tpl", ".txt");

    private final Path root;
    private final Map<Path, Anchors> anchors = new HashMap<>();

    DocLinks(Path root) {
        this.root = root.toAbsolutePath().normalize();
    }

    /** Every problem in the repository's Markdown links and doc citations. */
    List<Problem> check() {
        List<Path> files = files();
        Set<String> classes = new HashSet<>();
        for (Path file : files) {
            String name = file.getFileName().toString();
            if (name.endsWith(".java")) {
                classes.add(name.substring(0, name.length() - ".java".length()));
            }
        }
        List<Problem> problems = new ArrayList<>();
        for (Path file : files) {
            String name = file.getFileName().toString();
            if (name.endsWith(MD)) {
                problems.addAll(links(file));
            }
            if (name.equals("Dockerfile") || CODE_SUFFIXES.stream().anyMatch(name::endsWith)) {
                problems.addAll(citations(file));
                if (!name.endsWith(".java")) {
                    problems.addAll(testNames(file, classes));
                }
            }
        }
        return problems;
    }

    /**
     * Test and benchmark classes named outside Java ("IndexerImageTest starts the ENTRYPOINT", "bin/bench TraceBench")
     * that no source file declares. Globs ({@code *FaultTest}) and annotations ({@code @ParameterizedTest}) are not
     * names of ours.
     */
    List<Problem> testNames(Path file, Set<String> classes) {
        List<Problem> problems = new ArrayList<>();
        List<String> lines = read(file);
        for (int i = 0; i < lines.size(); i++) {
            Matcher m = TEST_NAME.matcher(lines.get(i));
            while (m.find()) {
                if (!classes.contains(m.group(1))) {
                    problems.add(new Problem(
                            relative(file), i + 1, "names " + m.group(1) + ", which no Java file declares"));
                }
            }
        }
        return problems;
    }

    /** The repository's tracked files ({@code git ls-files}); outside a Git checkout, every file not in target/. */
    List<Path> files() {
        if (Files.exists(root.resolve(".git"))) {
            List<Path> tracked = tracked();
            if (tracked != null) {
                return tracked;
            }
        }
        try (Stream<Path> walk = Files.walk(root)) {
            return walk.filter(Files::isRegularFile)
                    .filter(p -> Stream.of(root.relativize(p).toString().split("[/\\\\]"))
                            .noneMatch(part -> part.equals("target") || part.startsWith(".")))
                    .sorted()
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code git ls-files}, or null when git cannot answer (not installed, not a checkout). */
    private List<Path> tracked() {
        try {
            Process git = new ProcessBuilder("git", "-C", root.toString(), "ls-files", "-z")
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            byte[] out = git.getInputStream().readAllBytes();
            if (!git.waitFor(30, TimeUnit.SECONDS)) {
                git.destroyForcibly();
                return null;
            }
            if (git.exitValue() == 0) {
                return Stream.of(new String(out, StandardCharsets.UTF_8).split("\0"))
                        .filter(s -> !s.isEmpty())
                        .map(root::resolve)
                        .filter(Files::isRegularFile)
                        .toList();
            }
        } catch (IOException e) {
            return null; // no git on this machine
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return null;
    }

    /** Relative links and images of one Markdown file, outside code. */
    List<Problem> links(Path file) {
        List<Problem> problems = new ArrayList<>();
        List<String> lines = markdownProse(file);
        for (int i = 0; i < lines.size(); i++) {
            String line = INLINE_CODE.matcher(lines.get(i)).replaceAll("``");
            List<String> targets = new ArrayList<>();
            LINK.matcher(line).results().forEach(r -> targets.add(r.group(1)));
            REFERENCE.matcher(line).results().forEach(r -> targets.add(r.group(1)));
            for (String target : targets) {
                String problem = linkProblem(file, target);
                if (problem != null) {
                    problems.add(new Problem(relative(file), i + 1, problem));
                }
            }
        }
        return problems;
    }

    private String linkProblem(Path from, String target) {
        if (SCHEME.matcher(target).find()) {
            return null; // external: not ours to check offline
        }
        int hash = target.indexOf('#');
        String path = hash < 0 ? target : target.substring(0, hash);
        String anchor = hash < 0 ? null : target.substring(hash + 1);
        Path resolved = path.isEmpty()
                ? from
                : (path.startsWith("/")
                                ? root.resolve(path.substring(1))
                                : from.getParent().resolve(path))
                        .normalize();
        if (!resolved.startsWith(root)) {
            return "link " + target + " leaves the repository";
        }
        if (!Files.exists(resolved)) {
            return "link " + target + ": no such file " + relative(resolved);
        }
        if (anchor != null && !anchor.isEmpty() && resolved.toString().endsWith(MD)) {
            if (!anchorsOf(resolved).slugs().contains(anchor.toLowerCase(Locale.ROOT))) {
                return "link " + target + ": " + relative(resolved) + " has no heading with anchor #" + anchor;
            }
        }
        return null;
    }

    /** Sections of docs cited in one file (code comments, Dockerfiles, YAML, prose), lines joined. */
    List<Problem> citations(Path file) {
        String content = readString(file);
        if (!content.contains(MD)) {
            return List.of(); // most files cite no doc: skip them before any splitting
        }
        List<String> lines = file.toString().endsWith(MD)
                ? markdownProse(file)
                : content.lines().toList();
        StringBuilder text = new StringBuilder();
        List<Integer> lineStarts = new ArrayList<>();
        for (String line : lines) {
            lineStarts.add(text.length());
            text.append(COMMENT_MARKER.matcher(line).replaceFirst("")).append(' ');
        }
        List<Problem> problems = new ArrayList<>();
        Matcher m = CITATION.matcher(text);
        // the regex runs only where ".md" occurs, from the start of its path: a scan of every position is slow
        for (int at = text.indexOf(MD); at >= 0; at = text.indexOf(MD, at + MD.length())) {
            int start = at;
            while (start > 0 && isPathChar(text.charAt(start - 1))) {
                start--;
            }
            m.region(start, Math.min(text.length(), at + 400));
            if (!m.lookingAt() || m.end(1) != at + MD.length()) {
                continue;
            }
            String doc = m.group(1);
            if (doc.startsWith("target/") || doc.contains("/target/")) {
                continue; // a build output, not a doc
            }
            int line = lineOf(lineStarts, m.start());
            Path target = resolveDoc(file, doc);
            if (target == null) {
                problems.add(new Problem(relative(file), line, "cites " + doc + ", which is not in the repository"));
                continue;
            }
            String quoted = m.group(2) != null ? m.group(2) : m.group(3);
            String problem = quoted != null
                    ? sectionProblem(target, quoted.strip(), true)
                    : sectionProblem(target, (m.group(4) != null ? m.group(4) : m.group(5)).strip(), false);
            if (problem != null) {
                problems.add(new Problem(relative(file), line, "cites " + doc + ", " + problem));
            }
        }
        return problems;
    }

    /**
     * A quoted section names a heading of the doc, a bold lead-in that names a paragraph or list item, or a glossary
     * term (the first cell of a table row); the title may go on after it ({@code "Shards"} for "Shards (issue 11)").
     * Unquoted text must begin with a title, since the citation runs on into the sentence.
     */
    private String sectionProblem(Path doc, String section, boolean quoted) {
        Anchors a = anchorsOf(doc);
        String wanted = normal(section);
        for (String title : a.titles()) {
            String t = normal(title);
            if (quoted ? startsWithWord(t, wanted) : startsWithWord(wanted, t)) {
                return null;
            }
        }
        return "\"" + section + "\": " + relative(doc) + " has no such section";
    }

    private static boolean isPathChar(char c) {
        return c < 128 && (Character.isLetterOrDigit(c) || "_./-".indexOf(c) >= 0); // as [\w./-]
    }

    private static boolean startsWithWord(String text, String prefix) {
        return text.startsWith(prefix)
                && (text.length() == prefix.length() || !Character.isLetterOrDigit(text.charAt(prefix.length())));
    }

    /** A path as written (from the repository root), else next to the citing file, else under docs/ or docs/adr/. */
    private Path resolveDoc(Path from, String doc) {
        List<Path> candidates = List.of(
                root.resolve(doc),
                from.getParent().resolve(doc),
                root.resolve("docs").resolve(doc),
                root.resolve("docs/adr").resolve(doc));
        return candidates.stream()
                .map(Path::normalize)
                .filter(p -> p.startsWith(root) && Files.isRegularFile(p))
                .findFirst()
                .orElse(null);
    }

    /** The headings of a Markdown file as written and as GitHub's anchors, plus its glossary terms. */
    record Anchors(Set<String> titles, Set<String> slugs) {}

    private Anchors anchorsOf(Path doc) {
        return anchors.computeIfAbsent(doc, d -> {
            Set<String> titles = new LinkedHashSet<>();
            Set<String> slugs = new LinkedHashSet<>();
            Map<String, Integer> seen = new HashMap<>();
            for (String line : markdownProse(d)) {
                Matcher h = HEADING.matcher(line);
                if (h.matches()) {
                    String title = h.group(2);
                    titles.add(plain(title));
                    String slug = slug(title);
                    int n = seen.merge(slug, 1, Integer::sum);
                    slugs.add(n == 1 ? slug : slug + "-" + (n - 1));
                }
                HTML_ANCHOR
                        .matcher(line)
                        .results()
                        .forEach(r -> slugs.add(r.group(1).toLowerCase(Locale.ROOT)));
                Matcher lead = BOLD_LEAD.matcher(line);
                if (lead.find()) {
                    titles.add(lead.group(1));
                }
                Matcher term = TABLE_TERM.matcher(line);
                if (term.find() && !term.group(1).startsWith("-")) {
                    titles.add(term.group(1));
                }
            }
            return new Anchors(titles, slugs);
        });
    }

    /** GitHub's anchor of a heading: its text, lower case, without punctuation, spaces as hyphens. */
    static String slug(String heading) {
        return plain(heading)
                .toLowerCase(Locale.ROOT)
                .replaceAll("[^\\p{L}\\p{N}\\p{Mn}\\p{Pc} -]", "")
                .replace(' ', '-');
    }

    /** The rendered text of inline Markdown: links become their text, code and emphasis markers go. */
    private static String plain(String markdown) {
        return markdown.replaceAll("!?\\[([^\\]]*)\\]\\([^)]*\\)", "$1")
                .replace("`", "")
                .replaceAll("\\*\\*|__|\\*", "")
                .strip();
    }

    private static String normal(String s) {
        return plain(s).replaceAll("\\s+", " ").toLowerCase(Locale.ROOT);
    }

    /** The lines of a Markdown file with fenced code blocks blanked (kept as empty lines, so numbers stay right). */
    private List<String> markdownProse(Path file) {
        List<String> out = new ArrayList<>();
        boolean inFence = false;
        for (String line : read(file)) {
            if (FENCE.matcher(line).find()) {
                inFence = !inFence;
                out.add("");
            } else {
                out.add(inFence ? "" : line);
            }
        }
        return out;
    }

    private static int lineOf(List<Integer> lineStarts, int offset) {
        int line = 0;
        while (line + 1 < lineStarts.size() && lineStarts.get(line + 1) <= offset) {
            line++;
        }
        return line + 1;
    }

    private static String readString(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(file + ": " + e.getMessage(), e);
        }
    }

    private static List<String> read(Path file) {
        try {
            return Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(file + ": " + e.getMessage(), e);
        }
    }

    private String relative(Path p) {
        return root.relativize(p.toAbsolutePath().normalize()).toString();
    }
}

package io.kvindexer.packaging;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The parts of one of our Dockerfiles that decide what the image runs: base image, user, the COPY lines, ENV,
 * WORKDIR, EXPOSE, the exec-form RUN lines (build steps that write image files, e.g. the AOT cache's training), ENTRYPOINT
 * and CMD (exec form). No Docker engine runs here, so tests rebuild the image's file layout
 * from these lines and start its entry point as a real process.
 */
record Dockerfile(
        Path context,
        String from,
        String user,
        String workdir,
        List<Copy> copies,
        List<Run> runs,
        Map<String, String> env,
        List<String> entrypoint,
        List<String> cmd,
        List<String> expose) {

    /** One {@code COPY src dest} (no flags: our images copy only from the build context). */
    record Copy(String source, String destination) {}

    /** One exec-form {@code RUN}, with the ENV declared before it. */
    record Run(List<String> command, Map<String, String> env) {}

    private static final ObjectMapper JSON = new ObjectMapper();

    static Dockerfile parse(Path file) {
        String from = null;
        String user = null;
        String workdir = "/";
        List<Copy> copies = new ArrayList<>();
        List<Run> runs = new ArrayList<>();
        Map<String, String> env = new LinkedHashMap<>();
        List<String> entrypoint = List.of();
        List<String> cmd = List.of();
        List<String> expose = new ArrayList<>();
        for (String instruction : instructions(RepoFiles.read(file))) {
            String[] parts = instruction.split("\\s+", 2);
            String keyword = parts[0].toUpperCase();
            String rest = parts.length > 1 ? parts[1].strip() : "";
            switch (keyword) {
                case "FROM" -> from = rest;
                case "USER" -> user = rest;
                case "WORKDIR" -> workdir = rest;
                case "COPY" -> {
                    if (rest.startsWith("--")) {
                        throw new IllegalArgumentException(
                                "COPY flags are not expected in " + file + ": " + instruction);
                    }
                    String[] paths = rest.split("\\s+");
                    if (paths.length != 2) {
                        throw new IllegalArgumentException(
                                "expected COPY <src> <dest> in " + file + ": " + instruction);
                    }
                    copies.add(new Copy(paths[0], paths[1]));
                }
                case "ENV" -> {
                    int eq = rest.indexOf('=');
                    String value = rest.substring(eq + 1);
                    if (value.startsWith("\"") && value.endsWith("\"")) {
                        value = value.substring(1, value.length() - 1);
                    }
                    env.put(rest.substring(0, eq), value);
                }
                case "RUN" -> {
                    // shell-form RUNs (users, groups) change nothing the layout holds
                    if (rest.startsWith("[")) {
                        runs.add(new Run(execForm(file, rest), Map.copyOf(env)));
                    }
                }
                case "ENTRYPOINT" -> entrypoint = execForm(file, rest);
                case "CMD" -> cmd = execForm(file, rest);
                case "EXPOSE" -> expose.addAll(List.of(rest.split("\\s+")));
                default -> {
                    // LABEL, ...: nothing the layout depends on
                }
            }
        }
        return new Dockerfile(
                file.getParent(),
                from,
                user,
                workdir,
                List.copyOf(copies),
                List.copyOf(runs),
                env,
                entrypoint,
                cmd,
                List.copyOf(expose));
    }

    /**
     * Rebuilds the image's files under {@code root} (an image path /app/x becomes root/app/x) from exactly what the
     * COPY lines name in the build context. Fails when the build has not produced a source.
     */
    void layOut(Path root) throws IOException {
        for (Copy copy : copies) {
            Path source = context.resolve(copy.source());
            if (!Files.exists(source)) {
                throw new IllegalStateException(source + " (COPY source of " + context.resolve("Dockerfile")
                        + ") does not exist: build it first, e.g. mvn package -DskipTests");
            }
            Path target = inImage(root, copy.destination());
            if (Files.isDirectory(source)) {
                try (Stream<Path> files = Files.walk(source)) {
                    for (Path f : files.toList()) {
                        Path t = target.resolve(source.relativize(f).toString());
                        if (Files.isDirectory(f)) {
                            Files.createDirectories(t);
                        } else {
                            Files.createDirectories(t.getParent());
                            Files.copy(f, t);
                        }
                    }
                }
            } else {
                Files.createDirectories(target.getParent());
                Files.copy(source, target);
            }
        }
    }

    /** An absolute image path mapped under root. */
    static Path inImage(Path root, String imagePath) {
        return root.resolve(imagePath.replaceFirst("^/+", ""));
    }

    /**
     * The entry point as a host command: "java" is the given JVM, and every image path of the image's files (a whole
     * argument, or the value of a {@code -XX:Name=} flag) is mapped under root.
     */
    List<String> hostCommand(Path root, Path java, List<String> arguments) {
        List<String> command = hostForm(root, java, entrypoint);
        command.addAll(arguments);
        return command;
    }

    /** An exec form as a host command, mapped as {@link #hostCommand} maps the entry point. */
    List<String> hostForm(Path root, Path java, List<String> form) {
        List<String> command = new ArrayList<>();
        for (String part : form) {
            int eq = part.indexOf('=');
            String flag = part.startsWith("-XX:") && eq > 0 ? part.substring(0, eq + 1) : "";
            String path = part.substring(flag.length());
            if (part.equals("java")) {
                command.add(java.toString());
            } else if (isImageFile(path)) {
                command.add(flag + inImage(root, path));
            } else {
                command.add(part);
            }
        }
        return command;
    }

    /** A copied file, or a file a RUN step writes in the WORKDIR. */
    private boolean isImageFile(String path) {
        return path.startsWith("/")
                && (path.startsWith(workdir + "/") || copies.stream().anyMatch(c -> path.startsWith(c.destination())));
    }

    private static List<String> execForm(Path file, String json) {
        try {
            return JSON.readValue(json, new TypeReference<List<String>>() {});
        } catch (IOException e) {
            throw new UncheckedIOException("ENTRYPOINT/CMD of " + file + " must be in exec form: " + json, e);
        }
    }

    /** Instructions with line continuations joined and comments dropped. */
    private static List<String> instructions(String text) {
        List<String> out = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : text.lines().toList()) {
            String stripped = line.strip();
            if (stripped.startsWith("#") || (stripped.isEmpty() && current.isEmpty())) {
                continue;
            }
            if (stripped.endsWith("\\")) {
                current.append(stripped, 0, stripped.length() - 1).append(' ');
            } else {
                current.append(stripped);
                if (!current.toString().isBlank()) {
                    out.add(current.toString().strip());
                }
                current.setLength(0);
            }
        }
        return out;
    }
}

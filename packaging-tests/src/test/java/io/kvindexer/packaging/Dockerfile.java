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
 * WORKDIR, ENTRYPOINT and CMD (exec form). No Docker engine runs here, so tests rebuild the image's file layout
 * from these lines and start its entry point as a real process.
 */
record Dockerfile(
        Path context,
        String from,
        String user,
        String workdir,
        List<Copy> copies,
        Map<String, String> env,
        List<String> entrypoint,
        List<String> cmd) {

    /** One {@code COPY src dest} (no flags: our images copy only from the build context). */
    record Copy(String source, String destination) {}

    private static final ObjectMapper JSON = new ObjectMapper();

    static Dockerfile parse(Path file) {
        String from = null;
        String user = null;
        String workdir = "/";
        List<Copy> copies = new ArrayList<>();
        Map<String, String> env = new LinkedHashMap<>();
        List<String> entrypoint = List.of();
        List<String> cmd = List.of();
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
                case "ENTRYPOINT" -> entrypoint = execForm(file, rest);
                case "CMD" -> cmd = execForm(file, rest);
                default -> {
                    // RUN, EXPOSE, ...: nothing the layout depends on
                }
            }
        }
        return new Dockerfile(file.getParent(), from, user, workdir, List.copyOf(copies), env, entrypoint, cmd);
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
     * The entry point as a host command: "java" is the given JVM, and every argument that is an absolute image path
     * of a copied file is mapped under root.
     */
    List<String> hostCommand(Path root, Path java, List<String> arguments) {
        List<String> command = new ArrayList<>();
        for (String part : entrypoint) {
            if (part.equals("java")) {
                command.add(java.toString());
            } else if (part.startsWith("/") && copies.stream().anyMatch(c -> part.startsWith(c.destination()))) {
                command.add(inImage(root, part).toString());
            } else {
                command.add(part);
            }
        }
        command.addAll(arguments);
        return command;
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

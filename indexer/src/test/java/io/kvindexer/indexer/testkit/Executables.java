package io.kvindexer.indexer.testkit;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;

/** Finding the programs the tests of every module drive (chromium, promtool): the shell's PATH lookup. */
public final class Executables {

    private Executables() {}

    /** The first executable {@code name} in a directory of PATH, in PATH's order. */
    public static Optional<Path> onPath(String name) {
        return Arrays.stream(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
                .filter(dir -> !dir.isEmpty())
                .map(dir -> Path.of(dir, name))
                .filter(Files::isExecutable)
                .findFirst();
    }
}

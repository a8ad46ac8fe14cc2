package io.kvindexer.packaging;

import io.kvindexer.indexer.testkit.Processes;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * An image without a Docker engine: exactly the files its Dockerfile's COPY lines name, laid out under a temporary
 * root as the image would hold them, and its ENTRYPOINT started from there as a host process.
 */
final class LaidOutImage {

    private final Dockerfile image;
    private final Path root;

    private LaidOutImage(Dockerfile image, Path root) {
        this.image = image;
        this.root = root;
    }

    /** Lays out {@code <module>/Dockerfile} under {@code root}; its thin jar's Class-Path must be exactly libs/. */
    static LaidOutImage layOut(String module, String jarName, Path root) throws IOException {
        Dockerfile image = Dockerfile.parse(RepoFiles.root().resolve(module + "/Dockerfile"));
        image.layOut(root);
        ImageChecks.assertManifestClassPathIsExactlyTheLibs(Dockerfile.inImage(root, "/app/" + jarName));
        return new LaidOutImage(image, root);
    }

    /** The ENTRYPOINT with {@code arguments}, this JVM's java for "java", in the image's WORKDIR with its ENV. */
    ProcessBuilder command(List<String> arguments) {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        ProcessBuilder builder = new ProcessBuilder(image.hostCommand(root, java, arguments))
                .directory(Dockerfile.inImage(root, image.workdir()).toFile());
        builder.environment().putAll(image.env());
        return builder;
    }

    /** A started ENTRYPOINT; closing it stops the process (SIGTERM, then SIGKILL after 30 s). */
    record Running(Process process) implements AutoCloseable {

        static Running start(ProcessBuilder builder) throws IOException {
            return new Running(builder.start());
        }

        @Override
        public void close() {
            Processes.stop(process);
        }
    }
}

package io.kvindexer.packaging;

import io.kvindexer.indexer.testkit.Processes;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * An image without a Docker engine: exactly the files its Dockerfile's COPY lines name, laid out under a temporary
 * root as the image would hold them, its exec-form RUN steps run there with this JVM, and its ENTRYPOINT started from
 * there as a host process.
 */
final class LaidOutImage {

    private final Dockerfile image;
    private final Path root;

    private LaidOutImage(Dockerfile image, Path root) {
        this.image = image;
        this.root = root;
    }

    /**
     * Lays out {@code <module>/Dockerfile} under {@code root} and runs its exec-form RUN steps; its thin jar's
     * Class-Path must be exactly libs/, and every step must succeed (its output is in root/run-N.log).
     */
    static LaidOutImage layOut(String module, String jarName, Path root) throws IOException, InterruptedException {
        Dockerfile image = Dockerfile.parse(RepoFiles.root().resolve(module + "/Dockerfile"));
        image.layOut(root);
        ImageChecks.assertManifestClassPathIsExactlyTheLibs(Dockerfile.inImage(root, "/app/" + jarName));
        for (int i = 0; i < image.runs().size(); i++) {
            Dockerfile.Run run = image.runs().get(i);
            Path log = root.resolve("run-" + i + ".log");
            ProcessBuilder builder = new ProcessBuilder(image.hostForm(root, java(), run.command()))
                    .directory(Dockerfile.inImage(root, image.workdir()).toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile());
            builder.environment().putAll(run.env());
            Process step = builder.start();
            boolean exited = step.waitFor(300, TimeUnit.SECONDS);
            if (!exited || step.exitValue() != 0) {
                step.destroyForcibly();
                throw new IllegalStateException("RUN " + run.command() + " failed: " + Files.readString(log));
            }
        }
        return new LaidOutImage(image, root);
    }

    /** The ENTRYPOINT with {@code arguments}, this JVM's java for "java", in the image's WORKDIR with its ENV. */
    ProcessBuilder command(List<String> arguments) {
        ProcessBuilder builder = new ProcessBuilder(image.hostCommand(root, java(), arguments))
                .directory(Dockerfile.inImage(root, image.workdir()).toFile());
        builder.environment().putAll(image.env());
        return builder;
    }

    /** An image file under this layout's root. */
    Path file(String imagePath) {
        return Dockerfile.inImage(root, imagePath);
    }

    private static Path java() {
        return Path.of(System.getProperty("java.home"), "bin", "java");
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

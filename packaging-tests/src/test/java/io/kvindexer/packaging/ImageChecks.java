package io.kvindexer.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/** Checks shared by the image tests of the indexer and the operator. */
final class ImageChecks {

    private static final Pattern TEMURIN_JRE = Pattern.compile("^eclipse-temurin:(\\d+)(\\.[\\w.]+)?-jre(-[\\w.-]+)?$");

    private ImageChecks() {}

    static void assertSmallJre21PlusBase(Dockerfile image) {
        Matcher m = TEMURIN_JRE.matcher(image.from());
        assertThat(m.matches())
                .as("base image %s is a Temurin JRE (not a JDK)", image.from())
                .isTrue();
        assertThat(Integer.parseInt(m.group(1)))
                .as("Java feature version of %s", image.from())
                .isGreaterThanOrEqualTo(21);
    }

    /**
     * What both images share: a small Temurin JRE 21+ base, a numeric non-root user, exactly the thin jar and its
     * libs/ copied to /app, {@code java [JVM flags] -jar} of that jar as the ENTRYPOINT, and a .dockerignore that lets only those
     * two into the build context. Returns the parsed {@code <module>/Dockerfile}.
     */
    static Dockerfile assertThinJarImage(String module, String jarName) {
        Dockerfile image = Dockerfile.parse(RepoFiles.root().resolve(module + "/Dockerfile"));
        assertSmallJre21PlusBase(image);
        assertNonRootUser(image);
        assertThat(image.copies())
                .containsExactly(
                        new Dockerfile.Copy("target/libs/", "/app/libs/"),
                        new Dockerfile.Copy("target/" + jarName, "/app/" + jarName));
        assertThat(image.entrypoint()).startsWith("java").endsWith("-jar", "/app/" + jarName);
        assertThat(RepoFiles.read(RepoFiles.root().resolve(module + "/.dockerignore"))
                        .lines()
                        .toList())
                .contains("*", "!target/" + jarName, "!target/libs/");
        return image;
    }

    /** A numeric, non-zero UID (and GID), so Kubernetes runAsNonRoot can verify it without /etc/passwd. */
    static void assertNonRootUser(Dockerfile image) {
        assertThat(image.user()).as("USER").matches("^\\d+:\\d+$");
        String[] ids = image.user().split(":");
        assertThat(Integer.parseInt(ids[0])).as("UID").isGreaterThan(0).isEqualTo(10001);
        assertThat(Integer.parseInt(ids[1])).as("GID").isGreaterThan(0);
    }

    /**
     * The thin jar names its libraries in Class-Path (relative to the jar); the laid-out libs/ folder must hold
     * exactly those, no more (a stale jar in the image) and no fewer (a missing class at run time).
     */
    static void assertManifestClassPathIsExactlyTheLibs(Path jar) throws IOException {
        Manifest manifest;
        try (JarFile file = new JarFile(jar.toFile())) {
            manifest = file.getManifest();
        }
        assertThat(manifest.getMainAttributes().getValue("Main-Class"))
                .as("Main-Class of %s", jar)
                .isNotBlank();
        String classPath = manifest.getMainAttributes().getValue("Class-Path");
        assertThat(classPath).as("Class-Path of %s", jar).isNotBlank();
        List<String> entries =
                Arrays.stream(classPath.strip().split("\\s+")).sorted().toList();
        Path libs = jar.getParent().resolve("libs");
        List<String> present;
        try (Stream<Path> files = Files.list(libs)) {
            present = files.map(p -> "libs/" + p.getFileName()).sorted().toList();
        }
        assertThat(present)
                .as("libs/ of the image vs the jar's Class-Path (stale jars? run mvn clean package)")
                .isEqualTo(entries);
    }
}

package io.kvindexer.indexer;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReference;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An {@link Error} during startup recovery (not a recovery that fails, which starts the replica with what it has, but
 * a broken process) ends the process with status 1 and a line saying why, so that Kubernetes restarts it; before, the
 * recovery thread died, {@code /health} stayed 200 and {@code /ready} 503 for good. The real {@code main} in a child
 * JVM whose runtime lacks {@code java.net.http}, as a jlink'd image that left the module out would: asking its peer
 * for a dump fails with {@code NoClassDefFoundError}.
 */
class StartupErrorProcessTest {

    @TempDir
    Path tmp;

    @Test
    void anErrorInStartupRecoveryEndsTheProcessWithStatusOne() throws Exception {
        Path log = tmp.resolve("indexer.log");
        Process p = IndexerProcess.command(
                        List.of("--limit-modules", modulesWithout("java.net.http")),
                        "--port",
                        "0",
                        "--host",
                        "127.0.0.1",
                        "--peers",
                        "http://127.0.0.1:1")
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        try {
            assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("the process exits").isTrue();
            String output = Files.readString(log, StandardCharsets.UTF_8);
            assertThat(p.exitValue()).as(output).isEqualTo(1);
            assertThat(output)
                    .contains("kv-indexer listening on ")
                    .contains("startup recovery failed with java.lang.NoClassDefFoundError: java/net/http/HttpClient;"
                            + " the replica cannot start, so the process exits (status 1) to be restarted");
        } finally {
            p.destroyForcibly();
        }
    }

    /** The system modules but {@code left} and those that need it, for {@code --limit-modules}. */
    private static String modulesWithout(String left) {
        Set<ModuleDescriptor> all = ModuleFinder.ofSystem().findAll().stream()
                .map(ModuleReference::descriptor)
                .collect(Collectors.toSet());
        Set<String> out = new HashSet<>(Set.of(left));
        for (boolean more = true; more; ) {
            more = false;
            for (ModuleDescriptor m : all) {
                if (!out.contains(m.name()) && m.requires().stream().anyMatch(r -> out.contains(r.name()))) {
                    more = out.add(m.name());
                }
            }
        }
        return all.stream()
                .map(ModuleDescriptor::name)
                .filter(n -> !out.contains(n))
                .sorted()
                .collect(Collectors.joining(","));
    }
}

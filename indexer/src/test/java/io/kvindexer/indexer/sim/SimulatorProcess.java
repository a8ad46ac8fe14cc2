package io.kvindexer.indexer.sim;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The engine simulator's real {@code main} in a child JVM, its output discarded. */
public final class SimulatorProcess {

    private SimulatorProcess() {}

    /**
     * {@code java <jvmArgs> -cp <this class path> EngineSimulatorMain --endpoint <endpoint> --replay-endpoint
     * <replay> <options>}, started.
     */
    public static Process start(List<String> jvmArgs, String endpoint, String replay, String... options)
            throws IOException {
        return start(jvmArgs, ProcessBuilder.Redirect.DISCARD, endpoint, replay, options);
    }

    /** As {@link #start(List, String, String, String...)}, its output (stdout and stderr) sent to {@code output}. */
    public static Process start(
            List<String> jvmArgs, ProcessBuilder.Redirect output, String endpoint, String replay, String... options)
            throws IOException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        List<String> cmd = new ArrayList<>(List.of(java.toString()));
        cmd.addAll(jvmArgs);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), EngineSimulatorMain.class.getName()));
        cmd.addAll(List.of("--endpoint", endpoint, "--replay-endpoint", replay));
        cmd.addAll(List.of(options));
        return new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(output)
                .start();
    }
}

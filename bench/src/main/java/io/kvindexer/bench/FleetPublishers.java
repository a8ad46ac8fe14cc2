package io.kvindexer.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Engine ranks as publishers in child processes of their own, driven line by line over stdin/stdout: real libzmq
 * ({@code libzmq_fleet.py}: pyzmq on Debian's python3-zmq, one XPUB per engine) or the lean ZMTP PUBs of
 * {@link ZmtpFleetMain} (a JVM, one thread for all). Engine {@code i} (0-based, over all processes) is in process
 * {@code i / perProcess}.
 */
final class FleetPublishers implements AutoCloseable {

    /** Which publisher processes. */
    enum Kind {
        LIBZMQ,
        ZMTP
    }

    private final List<Process> children = new ArrayList<>();
    private final List<BufferedReader> from = new ArrayList<>();
    private final List<PrintStream> to = new ArrayList<>();
    private final List<String> endpoints = new ArrayList<>();
    private final int[] sizes;
    private final int perProcess;

    /** @param sendHwm each socket's send high-water mark (0: none; libzmq's default is 1,000) */
    FleetPublishers(Kind kind, int engines, int processes, int blockSize, int sendHwm) throws IOException {
        perProcess = (engines + processes - 1) / processes;
        int count = (engines + perProcess - 1) / perProcess;
        sizes = new int[count];
        Path script = Files.createTempFile("libzmq_fleet", ".py");
        try (var in = FleetPublishers.class.getResourceAsStream("libzmq_fleet.py")) {
            Files.write(script, in.readAllBytes());
        }
        script.toFile().deleteOnExit();
        for (int p = 0; p < count; p++) {
            sizes[p] = Math.min(perProcess, engines - p * perProcess);
            List<String> args =
                    List.of(Integer.toString(sizes[p]), Integer.toString(blockSize), Integer.toString(sendHwm));
            List<String> command = new ArrayList<>(
                    kind == Kind.LIBZMQ
                            ? List.of("/usr/bin/python3", script.toString())
                            : List.of(
                                    Path.of(System.getProperty("java.home"), "bin", "java")
                                            .toString(),
                                    "-Xmx1g",
                                    "-XX:+UseSerialGC",
                                    "-cp",
                                    System.getProperty("java.class.path"),
                                    ZmtpFleetMain.class.getName()));
            command.addAll(args);
            children.add(spawn(command, from, to, line -> endpoints.add(line.split(" ")[2])));
        }
    }

    /**
     * Starts one publisher process, adds its stdout and stdin to {@code from} and {@code to}, and hands each line it
     * prints before {@code READY} (one per engine) to {@code engineLine}.
     */
    static Process spawn(
            List<String> command, List<BufferedReader> from, List<PrintStream> to, Consumer<String> engineLine)
            throws IOException {
        Process child = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        from.add(r);
        to.add(new PrintStream(child.getOutputStream(), true, StandardCharsets.UTF_8));
        for (String line; !(line = r.readLine()).equals("READY"); ) {
            engineLine.accept(line);
        }
        return child;
    }

    int processes() {
        return children.size();
    }

    /** Engines in process {@code p}. */
    int size(int p) {
        return sizes[p];
    }

    /** The first engine of process {@code p}. */
    int first(int p) {
        return p * perProcess;
    }

    String endpoint(int engine) {
        return endpoints.get(engine);
    }

    /** Sends {@code line} to every process, then reads one answer line from each. */
    List<String> each(String line) throws IOException {
        for (PrintStream t : to) {
            t.println(line);
        }
        return answers();
    }

    /** Sends process {@code p} its own line, for each. */
    void tell(int p, String line) {
        to.get(p).println(line);
    }

    /** One answer line from each process, in process order. */
    List<String> answers() throws IOException {
        List<String> out = new ArrayList<>();
        for (BufferedReader r : from) {
            out.add(r.readLine());
        }
        return out;
    }

    /** Engines whose socket has seen a subscription. */
    int subscribed() throws IOException {
        int n = 0;
        for (String a : each("subscribed")) {
            n += Integer.parseInt(a.split(" ")[1]);
        }
        return n;
    }

    /** CPU seconds the publisher processes have used so far (all their threads: Python's loop and libzmq's I/O). */
    double cpuSeconds() throws IOException {
        double sum = 0;
        for (Process c : children) {
            String stat = Files.readString(Path.of("/proc", Long.toString(c.pid()), "stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            sum += (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0; // utime + stime, in USER_HZ (100)
        }
        return sum;
    }

    @Override
    public void close() {
        for (PrintStream t : to) {
            t.println("quit");
        }
        for (Process c : children) {
            c.destroy();
        }
    }
}

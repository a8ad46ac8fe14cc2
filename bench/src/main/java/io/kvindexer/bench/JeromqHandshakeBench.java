package io.kvindexer.bench;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * How often a plain jeromq SUB connecting over loopback never sends its ZMTP greeting (the stall the listener's
 * handshake watch repairs; jeromq PR #1022). A plain Java server accepts each connection, sends its own greeting
 * start and waits for the SUB's 10-byte signature; no jeromq on the accepting side, so only the connect path is
 * measured.
 */
@Command(
        name = "jeromq-handshake-bench",
        description = "Counts jeromq outgoing connects whose ZMTP greeting never arrives.")
public final class JeromqHandshakeBench extends BenchCommand {

    @Option(names = "--connects", description = "fresh connections to try")
    int connects = 150;

    @Option(names = "--wait-ms", description = "how long to wait for a greeting")
    int waitMs = 3000;

    public static void main(String[] args) {
        System.exit(new CommandLine(new JeromqHandshakeBench()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        int stalled = 0;
        try (ZContext ctx = new ZContext(1)) {
            for (int i = 0; i < connects; i++) {
                try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
                    ZMQ.Socket sub = ctx.createSocket(SocketType.SUB);
                    sub.setLinger(0);
                    sub.connect("tcp://127.0.0.1:" + server.getLocalPort());
                    sub.subscribe(new byte[0]);
                    try (Socket s = server.accept()) {
                        s.getOutputStream().write(new byte[] {(byte) 0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f});
                        if (readGreeting(s) < 10) {
                            stalled++;
                        }
                    }
                    sub.close();
                }
            }
        }
        System.out.printf("{\"connects\": %d, \"stalled\": %d, \"wait_ms\": %d}%n", connects, stalled, waitMs);
        return 0;
    }

    private int readGreeting(Socket s) throws IOException {
        s.setSoTimeout(waitMs);
        InputStream in = s.getInputStream();
        byte[] buf = new byte[10];
        int got = 0;
        try {
            while (got < 10) {
                int r = in.read(buf, got, 10 - got);
                if (r < 0) {
                    break;
                }
                got += r;
            }
        } catch (SocketTimeoutException e) {
            // stalled: the greeting never came
        }
        return got;
    }
}

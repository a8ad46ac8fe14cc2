package io.kvindexer.indexer.ingest;

import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;

/**
 * Not a test: measures how often a jeromq SUB connecting over loopback fails to send its ZMTP greeting within
 * 3 s (the reason EngineListener sets a short handshake interval). A plain Java server accepts and waits for
 * the 10-byte greeting signature. Usage: {@code java -cp <test-classes>:<classes>:<libs> ...JeromqHandshakeProbe [n]}.
 */
public final class JeromqHandshakeProbe {

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 150;
        int stalled = 0;
        try (ZContext ctx = new ZContext(1)) {
            for (int i = 0; i < n; i++) {
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
        System.out.printf("jeromq outgoing connects without a greeting within 3 s: %d of %d%n", stalled, n);
    }

    private static int readGreeting(Socket s) throws Exception {
        s.setSoTimeout(3000);
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
        } catch (java.net.SocketTimeoutException e) {
            // stalled
        }
        return got;
    }
}

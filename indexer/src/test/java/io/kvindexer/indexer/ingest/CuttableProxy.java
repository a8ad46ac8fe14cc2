package io.kvindexer.indexer.ingest;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

/**
 * A TCP proxy in front of an engine's socket whose link can be cut and restored, as a network blip does: the engine
 * keeps running, but its connections break, and new ones are closed at once until {@link #restore}.
 */
final class CuttableProxy implements AutoCloseable {

    private final ServerSocket server;
    private final int targetPort;
    private final List<Socket> open = new ArrayList<>(); // guarded by itself
    private volatile boolean cut;

    CuttableProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofPlatform().daemon().name("proxy-accept").start(this::acceptLoop);
    }

    String endpoint() {
        return "tcp://127.0.0.1:" + server.getLocalPort();
    }

    /** Breaks every connection through the proxy and refuses new ones (closed as soon as accepted). */
    void cut() {
        cut = true;
        synchronized (open) {
            for (Socket s : open) {
                closeQuietly(s);
            }
            open.clear();
        }
    }

    void restore() {
        cut = false;
    }

    private void acceptLoop() {
        try {
            while (true) {
                Socket client = server.accept();
                if (cut) {
                    closeQuietly(client);
                    continue;
                }
                Socket upstream = new Socket();
                try {
                    upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort));
                } catch (IOException e) {
                    closeQuietly(client);
                    continue;
                }
                synchronized (open) {
                    open.add(client);
                    open.add(upstream);
                }
                pump(client, upstream);
                pump(upstream, client);
            }
        } catch (IOException closed) {
            // the proxy closed
        }
    }

    private static void pump(Socket from, Socket to) {
        Thread.ofPlatform().daemon().name("proxy-pump").start(() -> {
            byte[] buffer = new byte[8192];
            try (InputStream in = from.getInputStream();
                    OutputStream out = to.getOutputStream()) {
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    out.write(buffer, 0, n);
                }
            } catch (IOException broken) {
                // cut, or the other side went away
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        });
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    @Override
    public void close() throws IOException {
        cut();
        server.close();
    }
}

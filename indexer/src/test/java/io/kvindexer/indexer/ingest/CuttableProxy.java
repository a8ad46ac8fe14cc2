package io.kvindexer.indexer.ingest;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A TCP proxy in front of an engine's socket whose link can be cut and restored, as a network blip does: the engine
 * keeps running, but its connections break, and new ones are closed at once until {@link #restore}. It can also hold
 * what the engine sends halfway through a message ({@link #stallAfter}), as a slow link does.
 */
final class CuttableProxy implements AutoCloseable {

    private final ServerSocket server;
    private final int targetPort;
    private final List<Socket> open = new ArrayList<>(); // guarded by itself
    private volatile boolean cut;
    /** bytes from the engine to pass on in one write before the stall; 0: no stall armed */
    private volatile int stallBytes;

    private volatile long stallMillis;

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

    /**
     * The next {@code bytes} bytes the engine sends reach the client in one write (so one read takes a full buffer of
     * them), then nothing more for {@code pause}, then the rest as it comes.
     */
    void stallAfter(int bytes, Duration pause) {
        stallMillis = pause.toMillis();
        stallBytes = bytes;
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
                pump(client, upstream, false);
                pump(upstream, client, true);
            }
        } catch (IOException closed) {
            // the proxy closed
        }
    }

    private void pump(Socket from, Socket to, boolean fromEngine) {
        Thread.ofPlatform().daemon().name("proxy-pump").start(() -> {
            byte[] buffer = new byte[8192];
            try (InputStream in = from.getInputStream();
                    OutputStream out = to.getOutputStream()) {
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    int stall = fromEngine ? stallBytes : 0;
                    if (stall > 0) {
                        stallBytes = 0;
                        byte[] held = Arrays.copyOf(buffer, Math.max(stall, n));
                        int have = n;
                        while (have < stall && (n = in.read(held, have, stall - have)) >= 0) {
                            have += n;
                        }
                        out.write(held, 0, have);
                        out.flush();
                        Thread.sleep(stallMillis);
                        continue;
                    }
                    out.write(buffer, 0, n);
                }
            } catch (IOException | InterruptedException broken) {
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

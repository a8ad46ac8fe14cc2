package io.kvindexer.indexer.ingest;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

/**
 * A TCP server on loopback that accepts every connection and never sends a byte: a ZMTP handshake with it never
 * completes, which is how a connect that jeromq stalls looks to the connecting side.
 */
final class SilentServer implements AutoCloseable {

    private final ServerSocket server;
    private final List<Socket> accepted = new ArrayList<>();
    private final List<Long> acceptedAt = new ArrayList<>();
    private final Thread acceptor;

    SilentServer() throws IOException {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        acceptor = Thread.ofPlatform().daemon().start(this::acceptAll);
    }

    String endpoint() {
        return "tcp://127.0.0.1:" + server.getLocalPort();
    }

    /** When each connection was accepted ({@link System#nanoTime}), in order. */
    synchronized List<Long> acceptedAt() {
        return List.copyOf(acceptedAt);
    }

    private void acceptAll() {
        try {
            while (true) {
                Socket s = server.accept(); // the TCP connect completes; no greeting ever comes back
                synchronized (this) {
                    accepted.add(s);
                    acceptedAt.add(System.nanoTime());
                }
            }
        } catch (IOException closed) {
            // close() ends the loop
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        try {
            acceptor.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (this) {
            for (Socket s : accepted) {
                s.close();
            }
        }
    }
}

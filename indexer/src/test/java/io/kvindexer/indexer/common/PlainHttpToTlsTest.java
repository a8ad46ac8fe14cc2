package io.kvindexer.indexer.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * What the JDK's HTTP client makes of a reply: a TLS record is told from other garbage and from an ordinary
 * failure. The real TLS server's case is TlsTest.anHttpUrlOfAnHttpsPeerSaysToUseHttps.
 */
class PlainHttpToTlsTest {

    /** The client's exception for {@code reply}, written by a real server socket to a real request. */
    private static IOException failureFor(byte[] reply) throws Exception {
        ServerSocket server = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
        try {
            // every connection the client opens (it retries a GET once on a connection closed without a reply)
            Thread answer = Thread.ofVirtual().start(() -> {
                while (!server.isClosed()) {
                    try (Socket s = server.accept()) {
                        s.getInputStream().read(new byte[4096]); // the request, unread beyond its first bytes
                        OutputStream out = s.getOutputStream();
                        out.write(reply);
                        out.flush();
                    } catch (IOException ignored) {
                        // the client closed first, or the test is over
                    }
                }
            });
            AtomicReference<IOException> failed = new AtomicReference<>();
            try (HttpClient client = HttpClient.newHttpClient()) {
                assertThatThrownBy(() -> client.send(
                                HttpRequest.newBuilder(
                                                URI.create("http://127.0.0.1:" + server.getLocalPort() + "/dump"))
                                        .timeout(Duration.ofSeconds(20))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString()))
                        .isInstanceOfSatisfying(IOException.class, failed::set);
            }
            server.close(); // ends the answering loop
            answer.join();
            return failed.get();
        } finally {
            server.close();
        }
    }

    @Test
    void aTlsAlertOrHandshakeIsTold() throws Exception {
        // TLS 1.2 record, fatal alert: what a TLS server answers to a plain request
        assertThat(PlainHttpToTls.detected(failureFor(new byte[] {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x50})))
                .isTrue();
        // a handshake record (a server that speaks first)
        assertThat(PlainHttpToTls.detected(failureFor(new byte[] {0x16, 0x03, 0x01, 0x00, 0x05, 0x02, 0, 0, 1, 0})))
                .isTrue();
    }

    @Test
    void otherRepliesAndFailuresAreNot() throws Exception {
        assertThat(PlainHttpToTls.detected(failureFor("SSH-2.0-OpenSSH_9.6\r\n".getBytes())))
                .isFalse();
        assertThat(PlainHttpToTls.detected(failureFor(new byte[0]))).isFalse();
        assertThat(PlainHttpToTls.detected(new java.net.ConnectException("Connection refused")))
                .isFalse();
        assertThat(PlainHttpToTls.detected(
                        new IOException("wrapped", new IOException("receiving [\u0015\u0003\u0003]"))))
                .isTrue();
    }
}

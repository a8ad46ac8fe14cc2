package io.kvindexer.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.helidon.webserver.WebServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.util.Arrays;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The load generator's connection against a real Helidon server: answers read through exactly, one after another. */
class KeepAliveConnectionTest {

    private WebServer server;

    @BeforeEach
    void start() {
        server = WebServer.builder()
                .host("127.0.0.1")
                .port(0)
                .routing(r -> r.post("/length", (req, res) -> {
                            byte[] body = req.content().as(byte[].class);
                            byte[] answer = new byte[body.length * 3]; // larger than the connection's buffer
                            Arrays.fill(answer, (byte) '\n'); // newlines: misread as headers if not skipped
                            res.send(answer);
                        })
                        .post("/missing", (req, res) -> {
                            req.content().consume();
                            res.status(404).send("{\"error\":\"no\"}");
                        })
                        .post("/chunked", (req, res) -> {
                            req.content().consume();
                            try (OutputStream out = res.outputStream()) {
                                out.write(new byte[100]);
                                out.flush();
                                out.write(new byte[100]);
                            }
                        }))
                .build()
                .start();
    }

    @AfterEach
    void stop() {
        server.stop();
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + server.port() + path);
    }

    @Test
    void answersAreReadThroughSoTheNextStatusIsTheNextAnswers() throws IOException {
        byte[] big = KeepAliveConnection.post(uri("/length"), "application/octet-stream", new byte[40_000]);
        byte[] small = KeepAliveConnection.post(uri("/length"), "application/octet-stream", new byte[3]);
        byte[] missing = KeepAliveConnection.post(uri("/missing"), "application/json", new byte[10]);
        try (KeepAliveConnection conn = new KeepAliveConnection(uri("/"))) {
            assertThat(conn.exchange(big)).isEqualTo(200);
            assertThat(conn.exchange(missing)).isEqualTo(404);
            assertThat(conn.exchange(small)).isEqualTo(200);
            assertThat(conn.exchange(big)).isEqualTo(200);
            assertThat(conn.closedByServer()).isFalse();
        }
    }

    @Test
    void anAnswerWithoutContentLengthFails() throws IOException {
        try (KeepAliveConnection conn = new KeepAliveConnection(uri("/"))) {
            assertThatThrownBy(() ->
                            conn.exchange(KeepAliveConnection.post(uri("/chunked"), "application/json", new byte[1])))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("Content-Length");
        }
    }
}

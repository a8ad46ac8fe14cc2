package io.kvindexer.indexer.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.helidon.http.HeaderValues;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/** Writes JSON responses with Jackson's generator: fields in our order, u64 values as unsigned decimals. */
final class JsonOut {

    static final JsonFactory FACTORY = new JsonFactory();

    @FunctionalInterface
    interface Body {
        void write(JsonGenerator g) throws IOException;
    }

    private JsonOut() {}

    static void send(ServerResponse res, int status, Body body) {
        res.status(Status.create(status));
        res.header(HeaderValues.CONTENT_TYPE_JSON);
        res.send(bytes(body));
    }

    static byte[] bytes(Body body) {
        ByteArrayOutputStream buf = new ByteArrayOutputStream(256);
        try (JsonGenerator g = FACTORY.createGenerator(buf)) {
            body.write(g);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return buf.toByteArray();
    }

    static void ok(ServerResponse res, int status) {
        send(res, status, g -> {
            g.writeStartObject();
            g.writeStringField("status", "ok");
            g.writeEndObject();
        });
    }

    static void error(ServerResponse res, int status, String message) {
        BodyDeadline deadline = BodyDeadline.current();
        if (res.isSent() || deadline != null && deadline.timedOut()) {
            return; // answered already (a body read deadline's 408): the connection is closing
        }
        send(res, status, errorBody(message));
    }

    /** The API's error body, {@code {"error": message}}. */
    static Body errorBody(String message) {
        return g -> {
            g.writeStartObject();
            g.writeStringField("error", message);
            g.writeEndObject();
        };
    }

    static void u64Field(JsonGenerator g, String name, long value) throws IOException {
        g.writeFieldName(name);
        g.writeNumber(Long.toUnsignedString(value));
    }
}

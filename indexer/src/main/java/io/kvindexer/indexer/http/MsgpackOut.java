package io.kvindexer.indexer.http;

import io.helidon.http.HeaderNames;
import io.helidon.http.HttpMediaType;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePacker;

/** Writes msgpack responses; errors stay JSON ({@link JsonOut#error}) whatever the request's encoding. */
final class MsgpackOut {

    @FunctionalInterface
    interface Body {
        void write(MessagePacker p) throws IOException;
    }

    /** Answers are small (a /query answer is ~100 bytes per instance): the default 8 KB first buffer was a cost. */
    private static final MessagePack.PackerConfig PACKER = new MessagePack.PackerConfig().withBufferSize(1024);

    private MsgpackOut() {}

    /** The answer is msgpack when the request was, or when its Accept names msgpack explicitly. */
    static boolean wanted(ServerRequest req) {
        if (MsgpackBody.isMsgpack(req)) {
            return true;
        }
        for (HttpMediaType t : req.headers().acceptedTypes()) {
            if (t.qualityFactor() > 0
                    && MsgpackBody.MEDIA_TYPE.equalsIgnoreCase(t.mediaType().text())) {
                return true;
            }
        }
        return false;
    }

    static void send(ServerResponse res, int status, Body body) {
        MessageBufferPacker p = PACKER.newBufferPacker();
        try {
            body.write(p);
            p.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        res.status(Status.create(status));
        res.header(HeaderNames.CONTENT_TYPE, MsgpackBody.MEDIA_TYPE);
        res.send(p.toByteArray());
    }
}

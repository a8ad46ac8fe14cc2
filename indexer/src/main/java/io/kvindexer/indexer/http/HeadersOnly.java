package io.kvindexer.indexer.http;

import io.helidon.common.GenericType;
import io.helidon.common.media.type.MediaType;
import io.helidon.http.HeaderNames;
import io.helidon.http.ServerResponseHeaders;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.helidon.webserver.http.spi.Sink;
import io.helidon.webserver.http.spi.SinkProvider;
import io.helidon.webserver.http.spi.SinkProviderContext;
import java.util.function.BiConsumer;

/**
 * Sends a response's status and headers with no length and no content: the HEAD answer for content whose length is
 * known only by writing it ({@link HeadResponse#sendUnknownLength}). Helidon 4.5 writes a {@code Content-Length}
 * with whatever is sent and a terminating chunk after a stream; only its sink SPI flushes the head of a stream by
 * itself. That flush frames the head as a stream ({@code Transfer-Encoding: chunked}, as the GET's is framed), and a
 * stream opened while a {@code Content-Length} was set writes no terminating chunk: so one is set for the opening
 * and taken off before the flush. {@code HeadDumpTest} checks on the wire that nothing follows the head.
 * Registered in {@code META-INF/services}.
 */
public final class HeadersOnly implements SinkProvider<Object> {

    /** The sink's type, what {@link ServerResponse#sink} is asked for. */
    static final GenericType<Sent> TYPE = GenericType.create(Sent.class);

    /** What the provider gives back: the head is sent, there is nothing to emit. */
    static final class Sent implements Sink<Object> {
        @Override
        public Sink<Object> emit(Object event) {
            throw new UnsupportedOperationException("a HEAD answer has no content");
        }

        @Override
        public void close() {}
    }

    @Override
    public boolean supports(GenericType<? extends Sink<?>> type, ServerRequest request) {
        return TYPE.equals(type);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <X extends Sink<Object>> X create(SinkProviderContext context) {
        ServerResponse res = context.serverResponse();
        ServerResponseHeaders headers = res.headers();
        headers.contentLength(0);
        res.outputStream(); // opened as a stream of a known length: closing it writes nothing
        headers.remove(HeaderNames.CONTENT_LENGTH);
        context.flushHeaders();
        return (X) new Sent();
    }

    @Override
    @SuppressWarnings("removal") // abstract in the SPI; Helidon calls it only when create(context) refuses
    @Deprecated(since = "4.1.2", forRemoval = true)
    public <X extends Sink<Object>> X create(
            ServerResponse response, BiConsumer<Object, MediaType> eventConsumer, Runnable closeRunnable) {
        throw new UnsupportedOperationException("needs the sink context's flushHeaders");
    }
}

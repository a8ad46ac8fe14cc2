package io.kvindexer.indexer.event;

/**
 * Decodes one msgpack payload of an engine's KV-event stream into a {@link KvEventBatch}.
 * Stateless and thread-safe.
 *
 * <p>CONTRACT STUB: the body comes with the decoder work.
 */
public final class EngineEventDecoder {

    public KvEventBatch decode(byte[] payload) throws EventDecodeException {
        throw new UnsupportedOperationException("decoder");
    }
}

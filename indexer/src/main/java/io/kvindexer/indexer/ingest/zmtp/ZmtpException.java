package io.kvindexer.indexer.ingest.zmtp;

/** The peer broke the ZMTP protocol (or refused us); the connection is dropped and made again. */
public final class ZmtpException extends Exception {

    private static final long serialVersionUID = 1L;

    public ZmtpException(String message) {
        super(message);
    }
}

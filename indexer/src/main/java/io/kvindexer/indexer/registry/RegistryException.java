package io.kvindexer.indexer.registry;

/** A registration request the registry refuses; the HTTP layer maps {@link Kind} to a status once. */
public final class RegistryException extends Exception {

    public enum Kind {
        /** 400: an invalid endpoint */
        INVALID,
        /** 404: no such instance / rank / key */
        NOT_FOUND,
        /** 409: conflicts with what is registered */
        CONFLICT
    }

    private final Kind kind;

    public RegistryException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}

package io.kvindexer.indexer.common;

/** A tenant partitions a model's index (Dynamo's {@code tenant_id}); requests and events that name none share one. */
public final class Tenants {

    /** The tenant of every request and registration that names none, as in Dynamo. */
    public static final String DEFAULT = "default";

    private Tenants() {}
}

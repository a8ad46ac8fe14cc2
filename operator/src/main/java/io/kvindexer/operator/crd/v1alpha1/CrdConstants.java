package io.kvindexer.operator.crd.v1alpha1;

/** API group and version of the kv-indexer custom resources. */
public final class CrdConstants {
    public static final String GROUP = "kvindexer.io";
    public static final String VERSION = "v1alpha1";
    public static final String API_VERSION = GROUP + "/" + VERSION;

    private CrdConstants() {}
}

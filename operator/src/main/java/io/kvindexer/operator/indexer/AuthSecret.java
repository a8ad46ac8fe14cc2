package io.kvindexer.operator.indexer;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import java.util.Map;

/**
 * The indexer's optional bearer token lives in one Secret per namespace, {@value #SECRET_NAME} (key
 * {@value #KEY}). Indexer pods get it as {@code KV_INDEXER_AUTH_TOKEN} through an optional secret reference, so
 * without the Secret they run open as before; the operator reads the same variable (its Deployment mounts the same
 * Secret) and sends the token on every call it makes to an indexer.
 */
public final class AuthSecret {

    public static final String SECRET_NAME = "kv-indexer-auth";
    public static final String KEY = "token";
    public static final String ENV = "KV_INDEXER_AUTH_TOKEN";

    private AuthSecret() {}

    /** The env var of the indexer container: the Secret's token when the Secret exists, unset otherwise. */
    public static EnvVar envVar() {
        return new EnvVarBuilder()
                .withName(ENV)
                .withNewValueFrom()
                .withNewSecretKeyRef()
                .withName(SECRET_NAME)
                .withKey(KEY)
                .withOptional(true)
                .endSecretKeyRef()
                .endValueFrom()
                .build();
    }

    /** The operator's token from its own environment; null (no header sent) when unset or blank. */
    public static String operatorToken(Map<String, String> env) {
        String t = env.get(ENV);
        return t == null || t.isBlank() ? null : t.strip();
    }
}

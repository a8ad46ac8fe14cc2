package io.kvindexer.operator.indexer;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.kvindexer.operator.common.IndexerSecurity;
import java.util.Map;

/**
 * The namespace-wide bearer token of earlier versions, {@value #SECRET_NAME} (key {@value #KEY}), made by the user.
 * Indexer pods with authentication off get it as {@code KV_INDEXER_AUTH_TOKEN} through an optional secret reference,
 * so without the Secret they run open; the operator reads the same variable (the chart's Deployment mounts the
 * Secret of its release namespace) and sends the token to those indexers. No KvIndexer's own token Secret has this
 * name ({@link IndexerSecurity#tokenSecret}).
 */
public final class AuthSecret {

    public static final String SECRET_NAME = IndexerSecurity.SHARED_TOKEN_SECRET;
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

package io.kvindexer.operator.reconcile;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kvindexer.operator.client.ReplicaAccess;
import io.kvindexer.operator.common.IndexerSecurity;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

/**
 * How the operator reaches a KvIndexer's replicas, read from the Secrets they mount: the token of
 * {@code <name>-auth} and the {@code ca.crt} of {@code <name>-tls}. With authentication off, the operator's own
 * token (its environment, the namespace-wide {@code kv-indexer-auth} of earlier versions) is sent, if any.
 */
public final class ReplicaAccesses {

    private ReplicaAccesses() {}

    public static ReplicaAccess read(KubernetesClient client, KvIndexer kvi) {
        String ns = kvi.getMetadata().getNamespace();
        String token = IndexerSecurity.authEnabled(kvi)
                ? value(client, ns, IndexerSecurity.tokenSecret(kvi), IndexerSecurity.TOKEN_KEY)
                : null;
        String ca = IndexerSecurity.tlsEnabled(kvi)
                ? value(client, ns, IndexerSecurity.tlsSecret(kvi), IndexerSecurity.CA_KEY)
                : null;
        return new ReplicaAccess(
                ns + "/" + kvi.getMetadata().getName(),
                IndexerSecurity.scheme(kvi),
                token == null ? null : token.strip(),
                ca);
    }

    private static String value(KubernetesClient client, String ns, String secret, String key) {
        return value(client.secrets().inNamespace(ns).withName(secret).get(), key);
    }

    /** A Secret's value as text (from {@code data}, or {@code stringData} as the mock API server keeps it). */
    public static String value(Secret secret, String key) {
        if (secret == null) {
            return null;
        }
        Map<String, String> data = secret.getData();
        if (data != null && data.get(key) != null) {
            return new String(Base64.getDecoder().decode(data.get(key)), StandardCharsets.UTF_8);
        }
        Map<String, String> plain = secret.getStringData();
        return plain == null ? null : plain.get(key);
    }
}

package io.kvindexer.operator.client;

import io.kvindexer.tls.CaTrust;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import javax.net.ssl.SSLContext;

/**
 * TLS that trusts exactly a KvIndexer's CA ({@link CaTrust}: the operator calls replicas by pod IP, which is never
 * in their certificates, so those are accepted on the chain alone). The CA is the operator's own per-namespace CA,
 * or the cert-manager issuer named for the KvIndexer (give the indexers an issuer of their own: any certificate it
 * signs passes for a replica).
 */
final class ReplicaTrust {

    private ReplicaTrust() {}

    static SSLContext sslContext(String caPem) {
        try {
            return CaTrust.sslContext(new ByteArrayInputStream(caPem.getBytes(StandardCharsets.US_ASCII)));
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalArgumentException("unusable CA certificate: " + e.getMessage(), e);
        }
    }
}

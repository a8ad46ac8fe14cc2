package io.kvindexer.operator.indexer;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.common.ServedAs;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.tls.CaTrust;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;

/**
 * Whether the replicas serve a certificate of a given CA, as they answer a TLS handshake trusting that CA alone
 * (nothing is sent after it). What a replica serves is known only by asking it: its copy of the Secret follows
 * within the kubelet's sync period, and it reloads the files then, but a kubelet may lag, and a pod may be stopped.
 */
final class ServedCertificates {
    private static final Duration TIMEOUT = Duration.ofSeconds(3);

    private ServedCertificates() {}

    /**
     * True when every replica pod of {@code kvi} that serves the certificate of {@code secret} (or does not say
     * what it serves, {@link ServedAs}) answers on its pod IP with a certificate {@code ca} issued. A pod with no
     * address yet, or one that does not answer so, counts as still serving a former certificate.
     */
    static boolean everyReplicaServes(KubernetesClient client, KvIndexer kvi, String secret, OperatorCa ca) {
        SSLContext trust;
        try {
            trust = CaTrust.sslContext(new ByteArrayInputStream(ca.certPem().getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException | IOException e) {
            return false;
        }
        List<Pod> pods = client.pods()
                .inNamespace(kvi.getMetadata().getNamespace())
                .withLabels(IndexerNames.selectorLabels(kvi))
                .list()
                .getItems();
        int port = kvi.getSpec().getPort();
        return pods.stream().filter(p -> serves(p, secret)).allMatch(p -> answers(trust, p, port));
    }

    private static boolean serves(Pod pod, String secret) {
        ServedAs served = ServedAs.of(pod);
        return served == null || (served.tls() && secret.equals(served.tlsSecret()));
    }

    private static boolean answers(SSLContext trust, Pod pod, int port) {
        String ip = pod.getStatus() == null ? null : pod.getStatus().getPodIP();
        if (ip == null || ip.isBlank()) {
            return false;
        }
        try (SSLSocket socket = (SSLSocket) trust.getSocketFactory().createSocket()) {
            socket.connect(new InetSocketAddress(ip, port), (int) TIMEOUT.toMillis());
            socket.setSoTimeout((int) TIMEOUT.toMillis());
            socket.startHandshake();
            return true;
        } catch (IOException e) {
            return false; // refused (a former CA's certificate), unreachable, or plain HTTP
        }
    }
}

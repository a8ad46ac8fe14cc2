package io.kvindexer.indexer.recovery;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.Test;

/** Which TLS context a replica's peer client gets (an https peer with {@code --tls-ca-file}: TlsTest). */
class PeerHttpClientsTest {

    @Test
    void plainHttpPeersDoNotBuildTheJdkDefaultTls() throws Exception {
        try (HttpClient client =
                PeerHttpClients.create(Duration.ofSeconds(1), null, List.of("http://10.0.0.1:8090", "http://b:1"))) {
            assertThat(client.sslContext()).isNotSameAs(SSLContext.getDefault());
        }
    }

    @Test
    void anHttpsPeerGetsTheJdkDefaultTrust() throws Exception {
        try (HttpClient client =
                PeerHttpClients.create(Duration.ofSeconds(1), null, List.of("http://a:1", "HTTPS://b:8443"))) {
            assertThat(client.sslContext()).isSameAs(SSLContext.getDefault());
        }
    }
}

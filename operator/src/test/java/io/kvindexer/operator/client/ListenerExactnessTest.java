package io.kvindexer.operator.client;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/**
 * A listener's exactness as the indexer's GET /workers writes it (the names of its {@code WorkerService}; the
 * indexer's own {@code ExactnessRoutesTest} reads the same fields from a real replica), and an older indexer that
 * does not write it at all.
 */
class ListenerExactnessTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static ListenerExactness read(String listener) throws Exception {
        return IndexerClient.exactness(JSON.readTree(listener));
    }

    @Test
    void readsTheStateItsReasonAndSinceWhen() throws Exception {
        ListenerExactness degraded = read("""
                {"endpoint": "tcp://a:1", "status": "active", "connected": true, "exactness": "degraded",
                 "exactness_reason": "replay incomplete: engine buffer starts at 40, requested 0",
                 "exactness_since_ms": 1772600767000}""");
        assertThat(degraded)
                .isEqualTo(new ListenerExactness(
                        "degraded",
                        "replay incomplete: engine buffer starts at 40, requested 0",
                        "2026-03-04T05:06:07Z"));
        assertThat(degraded.exact()).isFalse();
        assertThat(degraded.describe())
                .isEqualTo("degraded (replay incomplete: engine buffer starts at 40, requested 0) since"
                        + " 2026-03-04T05:06:07Z");
        ListenerExactness exact = read("{\"exactness\": \"exact\", \"exactness_since_ms\": 1772600767000}");
        assertThat(exact.exact()).isTrue();
        assertThat(exact.reason()).isNull();
    }

    /** Not connected, with the indexer's reason: whatever the exactness says, the replica hears nothing. */
    @Test
    void aListenerNotConnectedIsThatWithItsConnectError() throws Exception {
        ListenerExactness down = read("""
                {"endpoint": "tcp://a:5600", "status": "active", "connected": false,
                 "connect_error": "the peer is a ROUTER socket, not a PUB", "exactness": "exact",
                 "exactness_since_ms": 1772600767000}""");
        assertThat(down)
                .isEqualTo(new ListenerExactness("not connected", "the peer is a ROUTER socket, not a PUB", null));
        assertThat(down.connected()).isFalse();
        assertThat(down.exact()).isFalse();
        // connecting for the first time, no attempt failed yet: its exactness as it says
        assertThat(read("{\"connected\": false, \"exactness\": \"exact\"}").exact())
                .isTrue();
        assertThat(read("{\"connected\": true, \"connect_error\": \"x\", \"exactness\": \"exact\"}")
                        .connected())
                .isTrue();
    }

    @Test
    void absentOrUnreadableIsNone() throws Exception {
        assertThat(read("{\"endpoint\": \"tcp://a:1\", \"status\": \"active\"}"))
                .isNull();
        assertThat(read("{\"exactness\": 3}")).isNull();
        assertThat(read("{\"exactness\": {\"state\": \"exact\"}}")).isNull();
    }
}

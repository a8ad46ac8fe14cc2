package io.kvindexer.operator.client;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/** A listener's exactness as GET /workers may write it, and an indexer that does not write it at all. */
class ListenerExactnessTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static ListenerExactness read(String listener) throws Exception {
        return IndexerClient.exactness(JSON.readTree(listener));
    }

    @Test
    void readAsAStringWithItsReasonAndSinceBesideIt() throws Exception {
        assertThat(read("""
                        {"endpoint": "tcp://a:1", "status": "active", "exactness": "degraded",
                         "exactness_reason": "unrecoverable gap", "exactness_since": "2026-03-04T05:06:07Z"}""")).isEqualTo(new ListenerExactness("degraded", "unrecoverable gap", "2026-03-04T05:06:07Z"));
        assertThat(read("{\"exactness\": \"replaying\", \"exactness_since_ms\": 1772600767000}"))
                .isEqualTo(new ListenerExactness("replaying", null, "2026-03-04T05:06:07Z"));
        ListenerExactness exact = read("{\"exactness\": \"exact\"}");
        assertThat(exact.exact()).isTrue();
    }

    @Test
    void readAsAnObject() throws Exception {
        ListenerExactness x = read("""
                {"exactness": {"state": "degraded", "reason": "skipped an undecodable batch", "since": "t0"}}""");
        assertThat(x).isEqualTo(new ListenerExactness("degraded", "skipped an undecodable batch", "t0"));
        assertThat(x.exact()).isFalse();
        assertThat(x.describe()).isEqualTo("degraded (skipped an undecodable batch) since t0");
    }

    @Test
    void absentOrUnreadableIsNone() throws Exception {
        assertThat(read("{\"endpoint\": \"tcp://a:1\", \"status\": \"active\"}"))
                .isNull();
        assertThat(read("{\"exactness\": 3}")).isNull();
        assertThat(read("{\"exactness\": {\"reason\": \"x\"}}")).isNull();
    }
}

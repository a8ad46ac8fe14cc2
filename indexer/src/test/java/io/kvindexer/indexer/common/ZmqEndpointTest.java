package io.kvindexer.indexer.common;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Dynamo's test_validate_zmq_endpoint_* cases and the error texts of compatibility.md, HTTP API. */
class ZmqEndpointTest {

    @Test
    void acceptsDynamoValidEndpoints() {
        for (String ok : new String[] {
            "tcp://*:5558",
            "tcp://127.0.0.1:0",
            "inproc://listener",
            "ipc:///tmp/dynamo.sock",
            "tcp://[::1]:5557",
            "tcp://host:65535"
        }) {
            assertThat(ZmqEndpoint.problem(ok)).as(ok).isNull();
        }
    }

    /** A Unix socket path or a host name has a bound; an error quotes an endpoint's first 100 characters. */
    @Test
    void refusesEndpointsLongerThanAnyEngineHasAndQuotesThemCut() {
        String host = "h".repeat(200_000);
        assertThat(ZmqEndpoint.problem("tcp://" + host + ":1"))
                .isEqualTo(
                        "invalid ZMQ endpoint `tcp://" + "h".repeat(94) + "...`: 200008 characters; the limit is 512");
        assertThat(ZmqEndpoint.lengthProblem("tcp://[" + "0".repeat(254) + "]:1"))
                .isEqualTo("a TCP host of 254 characters; the limit is 253");
        assertThat(ZmqEndpoint.lengthProblem("tcp://" + "h".repeat(253) + ":1")).isNull();
        assertThat(ZmqEndpoint.lengthProblem("ipc:///" + "p".repeat(505))).isNull();
        assertThat(ZmqEndpoint.lengthProblem("ipc:///" + "p".repeat(506)))
                .isEqualTo("513 characters; the limit is 512");
        assertThat(ZmqEndpoint.lengthProblem("tcp://" + "h".repeat(300))).isNull(); // malformed: problem() says how
    }

    @Test
    void rejectsWithDynamoTexts() {
        assertThat(ZmqEndpoint.problem("tcp://host")).isEqualTo("invalid ZMQ endpoint `tcp://host`: missing TCP port");
        assertThat(ZmqEndpoint.problem("tcp://:5558"))
                .isEqualTo("invalid ZMQ endpoint `tcp://:5558`: missing TCP host");
        assertThat(ZmqEndpoint.problem("udp://host:5558"))
                .isEqualTo("invalid ZMQ endpoint `udp://host:5558`: unsupported scheme `udp`");
        assertThat(ZmqEndpoint.problem("not-an-endpoint"))
                .isEqualTo("invalid ZMQ endpoint `not-an-endpoint`: missing scheme");
        assertThat(ZmqEndpoint.problem("tcp://")).isEqualTo("invalid ZMQ endpoint `tcp://`: missing address");
        assertThat(ZmqEndpoint.problem("tcp://[::1:5557"))
                .isEqualTo("invalid ZMQ endpoint `tcp://[::1:5557`: missing closing `]`");
        assertThat(ZmqEndpoint.problem("tcp://h:99999"))
                .isEqualTo(
                        "invalid ZMQ endpoint `tcp://h:99999`: invalid TCP port: number too large to fit in target type");
        assertThat(ZmqEndpoint.problem("tcp://h:x1"))
                .isEqualTo("invalid ZMQ endpoint `tcp://h:x1`: invalid TCP port: invalid digit found in string");
        assertThat(ZmqEndpoint.problem("tcp://h:"))
                .isEqualTo("invalid ZMQ endpoint `tcp://h:`: invalid TCP port: cannot parse integer from empty string");
    }
}

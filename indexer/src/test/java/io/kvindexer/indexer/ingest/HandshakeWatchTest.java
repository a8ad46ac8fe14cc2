package io.kvindexer.indexer.ingest;

import org.junit.jupiter.api.Test;
import org.zeromq.ZMonitor.Event;

import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** The handshake deadline rule, on a hand-driven clock. */
class HandshakeWatchTest {

    private final AtomicLong now = new AtomicLong(1_000);
    private final HandshakeWatch watch = new HandshakeWatch(500, now::get);

    @Test
    void noConnectionIsNeverStalled() {
        now.addAndGet(10_000);
        assertThat(watch.stalled()).isFalse();
    }

    @Test
    void aConnectWithoutHandshakePastTheDeadlineIsStalled() {
        watch.on(Event.CONNECTED);
        now.addAndGet(500);
        assertThat(watch.stalled()).isFalse();
        now.addAndGet(1);
        assertThat(watch.stalled()).isTrue();
        assertThat(watch.handshaken()).isFalse();
    }

    @Test
    void aHandshakeClearsTheDeadline() {
        watch.on(Event.CONNECTED);
        watch.on(Event.HANDSHAKE_PROTOCOL);
        now.addAndGet(10_000);
        assertThat(watch.stalled()).isFalse();
        assertThat(watch.handshaken()).isTrue();
    }

    @Test
    void aDisconnectClearsItAndTheNextConnectStartsAgain() {
        watch.on(Event.CONNECTED);
        watch.on(Event.HANDSHAKE_PROTOCOL);
        watch.on(Event.DISCONNECTED);
        now.addAndGet(10_000);
        assertThat(watch.stalled()).isFalse();
        watch.on(Event.CONNECTED); // the engine came back; this connection must handshake too
        assertThat(watch.handshaken()).isFalse();
        now.addAndGet(501);
        assertThat(watch.stalled()).isTrue();
    }
}

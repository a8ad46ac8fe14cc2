package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.zeromq.ZMonitor.Event;

/** The handshake deadline rule, on a hand-driven clock, and what the same events tell an EngineLink. */
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

    @Test
    void theLinkIsUpFromAHandshakeAndDownFromTheLossOfThatConnectionUntilTheNextHandshake() {
        AtomicLong wall = new AtomicLong(1_700_000_000_000L);
        AtomicInteger lost = new AtomicInteger();
        AtomicInteger back = new AtomicInteger();
        EngineLink link = new EngineLink(wall::get, lost::incrementAndGet, back::incrementAndGet);
        HandshakeWatch linked = new HandshakeWatch(500, now::get, link);

        linked.on(Event.CONNECTED);
        linked.on(Event.DISCONNECTED); // a connect that never handshook: nothing was up
        assertThat(link.state()).isEqualTo(EngineLink.State.NONE);
        linked.on(Event.CONNECTED);
        linked.on(Event.HANDSHAKE_PROTOCOL);
        assertThat(link.state()).isEqualTo(new EngineLink.State(true, null));
        assertThat(back.get()).as("a first connection is not a return").isZero();

        linked.on(Event.DISCONNECTED);
        wall.addAndGet(5_000);
        linked.on(Event.CONNECTED); // TCP is back, the handshake is not: still down, since the loss
        linked.on(Event.DISCONNECTED);
        assertThat(link.state()).isEqualTo(new EngineLink.State(false, Instant.ofEpochMilli(1_700_000_000_000L)));
        assertThat(lost.get()).isEqualTo(1);

        linked.on(Event.CONNECTED);
        linked.on(Event.HANDSHAKE_PROTOCOL);
        assertThat(link.state()).isEqualTo(new EngineLink.State(true, null));
        assertThat(back.get()).isEqualTo(1);

        linked.detach(); // our own close
        linked.on(Event.DISCONNECTED);
        assertThat(link.state().connected()).isTrue();
        assertThat(lost.get()).isEqualTo(1);
    }
}

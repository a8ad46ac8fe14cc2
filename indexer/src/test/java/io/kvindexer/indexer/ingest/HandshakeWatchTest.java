package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.zeromq.ZMonitor.Event;

/** The handshake deadline rule, on a hand-driven clock, and what the same events tell an EngineLink. */
class HandshakeWatchTest {

    private final AtomicLong now = new AtomicLong(1_000);
    private final HandshakeWatch watch = new HandshakeWatch(500, now::get);

    /** Feeds the monitor events in order, as the socket's monitor would report them. */
    private static void on(HandshakeWatch watch, Event... events) {
        for (Event e : events) {
            watch.on(e);
        }
    }

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
        on(watch, Event.CONNECTED, Event.HANDSHAKE_PROTOCOL);
        now.addAndGet(10_000);
        assertThat(watch.stalled()).isFalse();
        assertThat(watch.handshaken()).isTrue();
    }

    @Test
    void aDisconnectClearsItAndTheNextConnectStartsAgain() {
        on(watch, Event.CONNECTED, Event.HANDSHAKE_PROTOCOL, Event.DISCONNECTED);
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

        on(linked, Event.CONNECTED, Event.DISCONNECTED); // a connect that never handshook: nothing was up
        assertThat(link.state()).isEqualTo(EngineLink.State.NONE);
        on(linked, Event.CONNECTED, Event.HANDSHAKE_PROTOCOL);
        assertThat(link.state()).isEqualTo(new EngineLink.State(true, null, null));
        assertThat(back.get()).as("a first connection is not a return").isZero();

        linked.on(Event.DISCONNECTED);
        wall.addAndGet(5_000);
        on(
                linked,
                Event.CONNECTED,
                Event.DISCONNECTED); // TCP is back, the handshake is not: still down, since the loss
        assertThat(link.state()).isEqualTo(new EngineLink.State(false, Instant.ofEpochMilli(1_700_000_000_000L), null));
        assertThat(lost.get()).isEqualTo(1);
        link.attemptFailed("Connection refused"); // shown while down, until the next handshake
        assertThat(link.state())
                .isEqualTo(new EngineLink.State(false, Instant.ofEpochMilli(1_700_000_000_000L), "Connection refused"));

        on(linked, Event.CONNECTED, Event.HANDSHAKE_PROTOCOL);
        assertThat(link.state()).isEqualTo(new EngineLink.State(true, null, null));
        assertThat(back.get()).isEqualTo(1);

        linked.detach(); // our own close
        linked.on(Event.DISCONNECTED);
        assertThat(link.state().connected()).isTrue();
        assertThat(lost.get()).isEqualTo(1);
    }

    /**
     * What a return sets off (a listener without a replay endpoint turns {@code replaying} until the engine's next
     * batch) happens before the link shows up again, so whoever sees it connected also sees that: EngineDisconnectTest
     * read {@code connected} and then, now and then, still {@code exact}.
     */
    @Test
    void aReturnIsHandledBeforeTheLinkShowsUp() {
        AtomicLong wall = new AtomicLong(1_700_000_000_000L);
        AtomicReference<EngineLink> self = new AtomicReference<>();
        List<Boolean> upWhenBack = new ArrayList<>();
        EngineLink link = new EngineLink(
                wall::get, () -> {}, () -> upWhenBack.add(self.get().state().connected()));
        self.set(link);
        link.handshaken();
        link.disconnected();
        link.handshaken();
        assertThat(upWhenBack).containsExactly(false);
        assertThat(link.state().connected()).isTrue();
    }
}

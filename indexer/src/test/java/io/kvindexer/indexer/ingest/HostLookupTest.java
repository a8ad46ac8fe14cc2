package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.TestResources;
import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An engine's host name is looked up off the poller (issue 22: one engine cannot starve the others): a lookup that
 * hangs (a DNS server that does not answer) holds that engine only, not the others its poller serves. The lookup
 * is the one injected thing here; the engines are real ZeroMQ PUB sockets, read by one real poller.
 */
class HostLookupTest {

    private static final String SLOW = "slow.engine.test";
    private static final String MISSING = "missing.engine.test";
    private static final String LATE = "late.engine.test";
    private static final Duration PATIENCE = Duration.ofSeconds(20);

    @RegisterExtension
    final TestResources open = new TestResources();

    private final CountDownLatch slowEntered = new CountDownLatch(1);
    private final CountDownLatch slowAnswers = new CountDownLatch(1);
    private final AtomicInteger lateAsked = new AtomicInteger();
    private final AtomicBoolean lateResolves = new AtomicBoolean();

    /**
     * {@link #SLOW} answers 127.0.0.1 once the test lets it; {@link #MISSING} does not exist; {@link #LATE} exists
     * once the test says so (an engine pod's name before the pod is up); others as usual.
     */
    private final HostLookup lookup = host -> switch (host) {
        case SLOW -> {
            slowEntered.countDown();
            try {
                slowAnswers.await(); // (not bounded: the test lets it go)
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            yield InetAddress.getLoopbackAddress();
        }
        case MISSING -> throw new UnknownHostException(host);
        case LATE -> {
            lateAsked.incrementAndGet();
            if (!lateResolves.get()) {
                throw new UnknownHostException(host);
            }
            yield InetAddress.getLoopbackAddress();
        }
        default -> HostLookup.SYSTEM.byName(host);
    };

    @AfterEach
    void letTheLookupGo() {
        slowAnswers.countDown();
    }

    @Test
    void aSlowLookupDoesNotHoldTheOtherEnginesOfItsPoller() throws InterruptedException {
        IngestPollers pollers = onePoller();
        EngineSimulator slowEngine = open.add(EngineSimulator.Options.builder().start());
        EngineSimulator other = open.add(EngineSimulator.Options.builder().start());
        RecordingSink sink = new RecordingSink();
        String named = slowEngine.endpoint().replace("127.0.0.1", SLOW);
        EngineListener slowListener = open.listener(
                new ListenerSpec(1, 0, named, null), new SequenceWatermark(), sink, ListenerOptions.defaults(pollers));
        assertThat(slowEntered.await(PATIENCE.toSeconds(), TimeUnit.SECONDS))
                .as("the slow name is being looked up")
                .isTrue();

        // the same (only) poller serves the second engine while the first one's lookup hangs
        EngineListener otherListener = open.listener(
                new ListenerSpec(2, 0, other.endpoint(), null),
                new SequenceWatermark(),
                sink,
                ListenerOptions.defaults(pollers));
        indexesOnceActive(otherListener, other, sink, 2, 0);
        assertThat(slowListener.snapshot().connected())
                .as("the slow engine waits for its lookup")
                .isFalse();

        // the lookup answers: that engine connects too
        slowAnswers.countDown();
        indexesOnceActive(slowListener, slowEngine, sink, 1, 100);
    }

    /**
     * A name that does not resolve yet (an engine pod's, before the pod is up) leaves the listener pending and is
     * looked up again, as a refused connect is tried again: once it resolves, the listener connects and indexes.
     */
    @Test
    void aNameThatDoesNotResolveYetLeavesTheListenerPendingUntilItDoes() {
        EngineSimulator engine = open.add(EngineSimulator.Options.builder().start());
        RecordingSink sink = new RecordingSink();
        EngineListener listener = open.listener(
                new ListenerSpec(3, 0, engine.endpoint().replace("127.0.0.1", LATE), null),
                new SequenceWatermark(),
                sink,
                ListenerOptions.defaults(onePoller()));

        await().atMost(PATIENCE).until(() -> lateAsked.get() >= 3); // looked up again and again, not given up
        assertThat(listener.snapshot().status()).as("as /workers shows it").isEqualTo(ListenerStatus.PENDING);
        assertThat(listener.snapshot().connectError()).isEqualTo("unknown host " + LATE);
        assertThat(listener.lastError()).isNull();

        lateResolves.set(true);
        indexesOnceActive(listener, engine, sink, 3, 200);
    }

    @Test
    void aNameThatNeverResolvesStaysPendingAndSaysWhy() {
        EngineListener listener = open.listener(
                new ListenerSpec(4, 0, "tcp://" + MISSING + ":5557", null),
                new SequenceWatermark(),
                new RecordingSink(),
                ListenerOptions.defaults(onePoller()));

        await().atMost(PATIENCE)
                .until(() ->
                        ("unknown host " + MISSING).equals(listener.snapshot().connectError()));
        await().during(Duration.ofSeconds(1))
                .atMost(Duration.ofSeconds(5))
                .until(() -> listener.snapshot().status() == ListenerStatus.PENDING);
    }

    private IngestPollers onePoller() {
        return open.add(
                new IngestPollers(ZmqContext.shared(), 1, 1, new InflightBytes(1 << 20), Poller.WAIT_MILLIS, lookup));
    }

    /** Once {@code listener} is active, a block {@code engine} stores from token {@code from} reaches the index. */
    private static void indexesOnceActive(
            EngineListener listener, EngineSimulator engine, RecordingSink sink, long instanceId, int from) {
        Subscriptions.awaitActive(listener, engine, PATIENCE);
        engine.storeSequence(IntStream.range(from, from + 8).toArray(), 4).join();
        await().atMost(PATIENCE)
                .until(() -> !sink.held(new WorkerKey(instanceId, 0), StorageTier.DEVICE)
                        .isEmpty());
    }
}

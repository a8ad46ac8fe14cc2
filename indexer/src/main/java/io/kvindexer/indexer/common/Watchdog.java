package io.kvindexer.indexer.common;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * The one watchdog that bounds the process's blocked I/O with deadlines: a request's head and body (the HTTP
 * layer's read deadline), a {@code /dump} client that stops reading, a peer's dump that stops coming. A blocked read
 * or write cannot time itself out (Helidon's sockets and the HTTP client's body streams have no read timeout), so
 * something else must notice and act: one daemon thread for the whole process sleeps until the earliest armed
 * {@link Deadline} and calls {@link Deadline#expired} on those due. Arming and disarming write two fields, no task
 * is scheduled or cancelled per read; a deadline armed sooner than the watchdog's next wake wakes it.
 */
public final class Watchdog {

    /** Every deadline in use; dropped when retired or when its owner is gone ({@link Deadline#ownerGone}). */
    private static final Set<Deadline> ALL = ConcurrentHashMap.newKeySet();

    private static final Thread THREAD =
            Thread.ofPlatform().daemon().name("io-watchdog").start(Watchdog::watch);
    /** the longest the watchdog sleeps, so that abandoned deadlines are dropped even when none is armed */
    private static final long MAX_SLEEP = Duration.ofMinutes(1).toNanos();

    /** When the watchdog wakes next ({@link System#nanoTime}), valid when it is not scanning. */
    private static volatile long nextWake;

    private static volatile boolean scanning;

    private Watchdog() {}

    /** How many deadlines are watched now: for tests that check a finished deadline is let go at once. */
    public static int watched() {
        return ALL.size();
    }

    /**
     * One bound on blocked I/O. Its owner arms it ({@link #armAt}) before the I/O that may block and cancels it
     * after; once an armed time passes, the watchdog thread calls {@link #expired}, which must not block (it would
     * hold up every other deadline): it changes state, interrupts, or starts a thread to do what may block.
     */
    public abstract static class Deadline {

        private volatile boolean armed;
        /** when it expires ({@link System#nanoTime}), valid while armed */
        private volatile long at;
        /** in {@link #ALL}: from the first arming until retired */
        private volatile boolean watched;

        /** Expires at {@code nanoTime} unless cancelled or armed again first. */
        protected final void armAt(long nanoTime) {
            at = nanoTime;
            armed = true;
            if (!watched) {
                watched = true;
                ALL.add(this);
            }
            if (scanning || nanoTime - nextWake < 0) {
                LockSupport.unpark(THREAD);
            }
        }

        /** Expires {@code timeout} from now. */
        protected final void armIn(Duration timeout) {
            armAt(System.nanoTime() + timeout.toNanos());
        }

        protected final void cancel() {
            armed = false;
        }

        /**
         * True when armed for a time at or before {@code now}: what {@link #expired} checks first (under its own
         * lock), as its owner may have cancelled or re-armed it since the watchdog looked.
         */
        protected final boolean due(long now) {
            return armed && at - now <= 0;
        }

        /** Not watched any more (its I/O is over for good); arming it again watches it again. */
        protected final void retire() {
            armed = false;
            watched = false;
            ALL.remove(this);
        }

        /**
         * On the watchdog thread, once the armed time passed. It must cancel the deadline or arm it again: one left
         * armed in the past is expired again at every wake of the watchdog.
         */
        protected abstract void expired(long now);

        /** True once nothing can arm it again (e.g. its thread ended): the watchdog drops it. */
        protected boolean ownerGone() {
            return false;
        }
    }

    /** Expires the deadlines due, then sleeps until the earliest one still armed (or until a sooner one wakes it). */
    private static void watch() {
        while (true) {
            scanning = true; // an arm from now on is seen by this scan or wakes the watchdog
            long now = System.nanoTime();
            long earliest = now + MAX_SLEEP;
            for (Deadline d : ALL) {
                if (d.ownerGone()) {
                    d.retire();
                } else if (d.armed) {
                    long at = d.at;
                    if (at - now <= 0) {
                        try {
                            d.expired(now);
                        } catch (RuntimeException e) {
                            // one deadline's failure must not stop the others'
                            System.getLogger(Watchdog.class.getName())
                                    .log(System.Logger.Level.ERROR, "an I/O deadline failed to expire", e);
                        }
                        if (d.armed && d.at - now > 0 && d.at - earliest < 0) {
                            earliest = d.at; // re-armed by its expiry (e.g. a grace to write an answer)
                        }
                    } else if (at - earliest < 0) {
                        earliest = at;
                    }
                }
            }
            nextWake = earliest;
            scanning = false;
            LockSupport.parkNanos(earliest - System.nanoTime());
        }
    }
}

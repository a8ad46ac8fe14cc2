package io.kvindexer.operator.reconcile;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** Per-key exponential back-off for retrying an unreachable replica: initial, doubled per failure, capped. */
public final class Backoff {
    private final Duration initial;
    private final Duration max;
    private final Map<String, Integer> failures = new ConcurrentHashMap<>();

    public Backoff(Duration initial, Duration max) {
        this.initial = initial;
        this.max = max.compareTo(initial) < 0 ? initial : max;
    }

    /** The delay before the next attempt for {@code key}, counting this failure. */
    public Duration next(String key) {
        int n = failures.merge(key, 1, Integer::sum);
        long millis = initial.toMillis() << Math.min(n - 1, 20);
        return Duration.ofMillis(Math.min(millis, max.toMillis()));
    }

    public void reset(String key) {
        failures.remove(key);
    }

    /** Forgets every key not in {@code live}: a resource deleted while it was failing. */
    public void retain(java.util.Set<String> live) {
        failures.keySet().retainAll(live);
    }

    /** Keys with failures counted: for tests. */
    int size() {
        return failures.size();
    }

    /**
     * When to try {@code key} again after an attempt: the next back-off delay if it {@code failed}, else (the
     * failures forgotten) {@code ok}.
     */
    public Duration after(String key, boolean failed, Duration ok) {
        if (failed) {
            return next(key);
        }
        reset(key);
        return ok;
    }
}

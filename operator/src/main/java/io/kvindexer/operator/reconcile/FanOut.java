package io.kvindexer.operator.reconcile;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;

/**
 * Calls one function per item, each on its own virtual thread, and returns the results in item order: how both
 * reconcilers talk to every replica at once, so one slow or unreachable replica never holds up the others. The
 * function is expected to turn its own failures into its result; an exception escaping it fails the whole call.
 */
public final class FanOut {
    private FanOut() {}

    public static <T, R> List<R> map(List<T> items, Function<T, R> call) {
        if (items.isEmpty()) {
            return List.of();
        }
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<R>> futures =
                    items.stream().map(i -> pool.submit(() -> call.apply(i))).toList();
            List<R> out = new ArrayList<>(futures.size());
            for (Future<R> f : futures) {
                out.add(f.get());
            }
            return out;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while calling replicas", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("replica call crashed: " + e.getCause(), e.getCause());
        }
    }
}

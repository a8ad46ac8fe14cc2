package io.kvindexer.bench;

import java.util.List;
import java.util.function.ToDoubleFunction;

/** The median of one figure over repetitions (the middle one of an odd count, the upper middle of an even one). */
final class Medians {

    private Medians() {}

    static <T> double of(List<T> reps, ToDoubleFunction<T> figure) {
        double[] v = reps.stream().mapToDouble(figure).sorted().toArray();
        return v.length == 0 ? Double.NaN : v[v.length / 2];
    }
}

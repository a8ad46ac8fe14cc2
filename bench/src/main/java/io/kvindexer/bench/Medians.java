package io.kvindexer.bench;

import java.util.List;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

/** The median of one figure over repetitions (the middle one of an odd count, the upper middle of an even one). */
final class Medians {

    private Medians() {}

    static <T> double of(List<T> reps, ToDoubleFunction<T> figure) {
        double[] v = reps.stream().mapToDouble(figure).sorted().toArray();
        return v.length == 0 ? Double.NaN : v[v.length / 2];
    }

    /**
     * The median of a same-run ratio: per repetition, {@code figure} of the {@code over} target divided by that of
     * the {@code under} target (taken from the same repetition, so both saw the same stretch of the machine).
     */
    static <T, L> double ofRatio(List<T> reps, Function<T, L> over, Function<T, L> under, ToDoubleFunction<L> figure) {
        return of(reps, r -> figure.applyAsDouble(over.apply(r)) / figure.applyAsDouble(under.apply(r)));
    }
}

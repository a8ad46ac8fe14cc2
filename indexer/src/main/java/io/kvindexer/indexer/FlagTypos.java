package io.kvindexer.indexer;

import java.util.Collection;
import java.util.Comparator;
import java.util.List;

/**
 * The flags a mistyped one was probably meant as: within two edits (a transposed pair counts as one), nearest
 * first. picocli's own suggestions compare letter pairs, which a transposition such as {@code --prot} shares none of.
 */
final class FlagTypos {

    private static final int MAX_EDITS = 2;

    private FlagTypos() {}

    /** {@code typed} (a {@code --flag=value} by its flag) against {@code flags}; empty when none is near. */
    static List<String> nearest(String typed, Collection<String> flags) {
        String flag = typed.contains("=") ? typed.substring(0, typed.indexOf('=')) : typed;
        if (!flag.startsWith("-")) {
            return List.of();
        }
        return flags.stream()
                .filter(f -> f.startsWith("--") && edits(flag, f) <= MAX_EDITS)
                .sorted(Comparator.comparingInt((String f) -> edits(flag, f)).thenComparing(f -> f))
                .limit(3)
                .toList();
    }

    /** Optimal string alignment distance: insertions, deletions, substitutions and adjacent transpositions. */
    static int edits(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }
}

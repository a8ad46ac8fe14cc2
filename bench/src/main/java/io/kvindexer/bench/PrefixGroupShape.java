package io.kvindexer.bench;

import picocli.CommandLine.Option;

/**
 * The synthetic index of {@link ConsoleStatsBench} and {@link IndexMicroBench}, after Dynamo's
 * {@code radix_tree_microbench}: sequences of {@code --depth} blocks whose first quarter comes from one of
 * {@link #PREFIX_GROUPS} shared prefix groups, the rest unique, held by workers among {@code --workers}.
 */
final class PrefixGroupShape {

    static final int PREFIX_GROUPS = 4;

    @Option(names = "--workers", description = "workers holding the sequences")
    int workers = 64;

    @Option(names = "--depth", description = "blocks per sequence")
    int depth = 32;
}

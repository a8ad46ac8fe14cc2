package io.kvindexer.indexer.bench;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/**
 * What every picocli benchmark command shares: {@code --help} and {@code --version}, and its options listed in the
 * order they are declared. Subclasses inherit these command attributes and add their name and description; their
 * {@link #call()} returns the exit code.
 */
@Command(mixinStandardHelpOptions = true, sortOptions = false)
abstract class BenchCommand implements Callable<Integer> {}

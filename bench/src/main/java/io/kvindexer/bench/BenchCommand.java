package io.kvindexer.bench;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/**
 * What every picocli benchmark command shares: {@code --help} and {@code --version}, its options listed in the order
 * they are declared, each with its default value (so no description repeats it). Subclasses inherit these command
 * attributes and add their name and description; their {@link #call()} returns the exit code.
 */
@Command(mixinStandardHelpOptions = true, sortOptions = false, showDefaultValues = true)
abstract class BenchCommand implements Callable<Integer> {}

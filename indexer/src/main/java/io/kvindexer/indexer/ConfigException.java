package io.kvindexer.indexer;

/**
 * A bad flag, value or environment variable, found while parsing or starting: the message is the one line printed
 * before exiting with status 2. Its own type (not nested in {@link IndexerCli}) so the option mixins and the app's
 * start can throw it without depending on the parser that mixes them in.
 */
public final class ConfigException extends Exception {
    public ConfigException(String message) {
        super(message);
    }
}

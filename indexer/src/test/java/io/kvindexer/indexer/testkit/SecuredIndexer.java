package io.kvindexer.indexer.testkit;

import io.kvindexer.indexer.ConfigException;
import io.kvindexer.indexer.IndexerApp;
import java.util.ArrayList;
import java.util.List;

/** An in-process indexer for the TLS and token tests: on loopback, re-reading its files every 100 ms. */
public final class SecuredIndexer {

    private SecuredIndexer() {}

    /**
     * Starts an indexer on 127.0.0.1 (a free port) with {@code securityFlags} (its {@code --tls-*} or
     * {@code --auth-token-file} files), {@code --reload-interval 100ms}, then {@code more} flags.
     */
    public static IndexerApp start(List<String> securityFlags, String... more) throws ConfigException {
        List<String> args = new ArrayList<>(List.of("--host", "127.0.0.1", "--port", "0"));
        args.addAll(securityFlags);
        args.addAll(List.of("--reload-interval", "100ms"));
        args.addAll(List.of(more));
        return IndexerApp.start(args.toArray(String[]::new));
    }
}

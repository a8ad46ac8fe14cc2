package io.kvindexer.operator.client;

import java.net.URI;

/** One indexer replica as the operator calls it: its pod name (metrics label, status) and its base URL. */
public record IndexerEndpoint(String name, URI baseUrl) {

    public static IndexerEndpoint of(String name, String host, int port) {
        String h = host.contains(":") ? "[" + host + "]" : host;
        return new IndexerEndpoint(name, URI.create("http://" + h + ":" + port));
    }
}

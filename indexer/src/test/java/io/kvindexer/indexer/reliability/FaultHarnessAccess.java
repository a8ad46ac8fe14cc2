package io.kvindexer.indexer.reliability;

import io.kvindexer.indexer.http.HttpTestClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Set;
import java.util.TreeSet;

/** Dump comparison for tests outside this package: the set of memberships of a /dump body, sorted. */
public final class FaultHarnessAccess {

    private FaultHarnessAccess() {}

    public static Set<String> canonical(String dumpBody) {
        Set<String> out = new TreeSet<>();
        try {
            HttpTestClient.JSON
                    .readTree(dumpBody)
                    .properties()
                    .forEach(model -> model.getValue()
                            .path("events")
                            .forEach(ev -> ev.at("/event/data/stored/blocks")
                                    .forEach(b -> out.add(model.getKey() + "/"
                                            + ev.get("worker_id").asText() + "/"
                                            + ev.at("/event/dp_rank").asInt() + "/"
                                            + ev.path("storage_tier").asText() + "/"
                                            + b.get("block_hash").asText()))));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }
}

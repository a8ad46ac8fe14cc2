package io.kvindexer.indexer.http;

import io.kvindexer.indexer.dump.RouterEvent;
import io.kvindexer.indexer.index.ModelIndex;
import java.util.ArrayList;
import java.util.List;

/** An index's memberships as Dynamo's single-block Stored RouterEvents, event ids counting from 0. */
public final class DumpEvents {

    private DumpEvents() {}

    public static List<RouterEvent> of(ModelIndex index) {
        List<RouterEvent> out = new ArrayList<>();
        index.dump((worker, tier, hasParent, parentBlockHash, blockHash, localHash) -> out.add(new RouterEvent(
                worker.instanceId(),
                worker.dpRank(),
                tier,
                out.size(),
                new RouterEvent.Stored(hasParent, parentBlockHash, new long[] {blockHash}, new long[] {localHash}))));
        return out;
    }
}

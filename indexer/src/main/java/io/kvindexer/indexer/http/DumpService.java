package io.kvindexer.indexer.http;

import io.kvindexer.indexer.event.DumpJson;
import io.kvindexer.indexer.event.IndexDump;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.index.ModelIndex;
import io.helidon.http.HeaderValues;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

import java.io.OutputStream;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code GET /dump} (spec §5.8): every index as {@code "model:tenant": {block_size, model_name, tenant_id, events}},
 * streamed entry by entry. Pending writes are flushed first, so the dump holds everything accepted before the
 * request. An index whose dump fails is written as {@code {"error": ...}}, as Dynamo does; the status stays 200.
 */
final class DumpService implements ApiService {

    private static final System.Logger LOG = System.getLogger(DumpService.class.getName());
    private static final long FLUSH_TIMEOUT_SECONDS = 30;

    private final Indexers indexers;

    DumpService(Indexers indexers) {
        this.indexers = indexers;
    }

    @Override
    public void routes(Routes routes) {
        routes.get("/dump", Routes.Access.TOKEN, this::dump);
    }

    private void dump(ServerRequest req, ServerResponse res) throws Exception {
        indexers.flushAll().get(FLUSH_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        List<ModelIndex> all = indexers.all();
        res.status(Status.OK_200);
        res.header(HeaderValues.CONTENT_TYPE_JSON);
        try (OutputStream out = res.outputStream(); DumpJson.Writer writer = DumpJson.writer(out)) {
            for (ModelIndex ix : all) {
                IndexDump dump;
                try {
                    dump = new IndexDump(ix.modelName(), ix.tenantId(), ix.blockSize(), DumpEvents.of(ix));
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "dump of " + ix.modelName() + ":" + ix.tenantId() + " failed", e);
                    writer.error(ix.modelName() + ":" + ix.tenantId(), e.toString());
                    continue;
                }
                writer.entry(dump);
            }
        }
    }
}

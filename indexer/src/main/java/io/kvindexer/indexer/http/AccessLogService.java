package io.kvindexer.indexer.http;

import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.io.IOException;

/**
 * {@code POST /reopen_logs} (Dynamo's): opens the {@code --access-log} file again by its name after a rotation moved
 * it; {@code {"status":"ok"}}, also when there is no access log; 500 with the reason when the file cannot be opened
 * (the old one is written on). It needs the token where one is set: it acts on the replica's files.
 *
 * @param log null without {@code --access-log}
 */
record AccessLogService(AccessLog log) implements ApiService {

    @Override
    public void routes(Routes routes) {
        routes.post("/reopen_logs", Routes.Access.TOKEN, this::reopen);
    }

    private void reopen(ServerRequest req, ServerResponse res) {
        if (log != null) {
            try {
                log.reopen();
            } catch (IOException e) {
                JsonOut.error(res, 500, e.getMessage());
                return;
            }
        }
        JsonOut.ok(res, 200);
    }
}

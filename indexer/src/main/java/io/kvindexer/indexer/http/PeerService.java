package io.kvindexer.indexer.http;

import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.kvindexer.indexer.common.OwnAddress;
import io.kvindexer.indexer.registry.PeerRegistry;
import java.util.List;

/**
 * {@code /register_peer}, {@code /deregister_peer}, {@code /peers} (compatibility.md, HTTP API); {@code bindHost}:
 * where this replica listens ({@code --host}), to refuse its own URL.
 */
record PeerService(PeerRegistry peers, long maxBody, int maxPeers, String bindHost) implements ApiService {

    @Override
    public void routes(Routes routes) {
        routes.post("/register_peer", Routes.Access.TOKEN, this::register)
                .post("/deregister_peer", Routes.Access.TOKEN, this::deregister)
                .get("/peers", Routes.Access.OPEN, this::list);
    }

    private void register(ServerRequest req, ServerResponse res) {
        String url = JsonBody.read(req, maxBody, Requests::peerUrl);
        String problem = io.kvindexer.indexer.registry.PeerUrl.problem(url);
        if (problem != null) {
            throw ApiError.invalid(problem);
        }
        // the request came in on this replica's port: a URL of this process would make it recover from itself
        if (OwnAddress.reachedBy(url, bindHost, req.localPeer().port())) {
            throw ApiError.invalid(
                    "peer URL `" + url + "` is this replica's own address: it cannot recover from itself");
        }
        if (!peers.addWithin(url, maxPeers)) {
            throw new ApiError(409, maxPeers + " peers are registered; the limit is " + maxPeers + " (--max-peers)");
        }
        JsonOut.ok(res, 201);
    }

    private void deregister(ServerRequest req, ServerResponse res) {
        String url = JsonBody.read(req, maxBody, Requests::peerUrl);
        if (!peers.remove(url)) {
            throw new ApiError(404, "peer not found");
        }
        JsonOut.ok(res, 200);
    }

    private void list(ServerRequest req, ServerResponse res) {
        List<String> urls = peers.list();
        JsonOut.send(res, 200, g -> {
            g.writeStartArray();
            for (String u : urls) {
                g.writeString(u);
            }
            g.writeEndArray();
        });
    }
}

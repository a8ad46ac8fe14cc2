package io.kvindexer.indexer.http;

import io.helidon.http.HeaderNames;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/** {@code GET /openapi.yaml}: the OpenAPI document of this API, served from the jar as it was written. */
final class OpenApiService implements ApiService {

    static final String RESOURCE = "/openapi.yaml";

    private final byte[] document;

    OpenApiService() {
        try (InputStream in = OpenApiService.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is missing from the class path");
            }
            document = in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void routes(Routes routes) {
        routes.get(RESOURCE, Routes.Access.OPEN, this::document);
    }

    private void document(ServerRequest req, ServerResponse res) {
        res.header(HeaderNames.CONTENT_TYPE, "application/yaml");
        res.send(document);
    }
}

package io.kvindexer.indexer.http;

import io.helidon.webserver.WebServer;
import io.helidon.webserver.WebServerConfig;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.testing.junit5.DirectClient;
import io.helidon.webserver.testing.junit5.spi.DirectJunitExtension;
import io.helidon.webserver.testing.junit5.spi.ServerJunitExtension;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.IndexerCore;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;

/**
 * The indexer under Helidon's test harness, plugged in through the harness's own extension points (service-loaded
 * from {@code META-INF/services}): for a class marked {@link IndexerRoutes}, {@link Server} mounts the indexer's
 * routing on the {@code @ServerTest} server (a real socket), {@link Direct} serves it through Helidon's in-memory
 * {@link DirectClient} under {@code @RoutingTest}. Either way the test gets an {@link HttpTestClient}, so the same
 * test body runs through both. One indexer per test class, as Helidon keeps one server per class.
 */
public final class IndexerHarness implements AutoCloseable {

    private final IndexerCore indexer;
    private HttpTestClient client; // over a socket, or through Helidon's DirectClient

    private IndexerHarness(IndexerCore indexer) {
        this.indexer = indexer;
    }

    /** The harness of a class marked {@link IndexerRoutes}, or null for any other Helidon test class. */
    private static IndexerHarness forClass(ExtensionContext context) {
        Class<?> type = context.getRequiredTestClass();
        if (!type.isAnnotationPresent(IndexerRoutes.class)) {
            return null;
        }
        try {
            IndexerConfig config = config(type);
            if (config.recoversFromPeers() || config.demo()) {
                throw new IllegalArgumentException("peer recovery and the demo need an IndexerApp");
            }
            return new IndexerHarness(IndexerCore.start(config));
        } catch (Exception e) {
            throw new IllegalStateException("cannot start the indexer of " + type.getName(), e);
        }
    }

    /** From the first {@link IndexerRoutes.Config} method of the class, its superclasses, then enclosing classes. */
    private static IndexerConfig config(Class<?> type) throws ReflectiveOperationException {
        List<Class<?>> search = new ArrayList<>();
        for (Class<?> t = type; t != null; t = t.getEnclosingClass()) {
            for (Class<?> c = t; c != null && c != Object.class; c = c.getSuperclass()) {
                search.add(c);
            }
        }
        for (Class<?> c : search) {
            for (Method m : c.getDeclaredMethods()) {
                if (m.isAnnotationPresent(IndexerRoutes.Config.class)) {
                    if (!Modifier.isStatic(m.getModifiers()) || m.getParameterCount() != 0) {
                        throw new IllegalStateException(m + ": @IndexerRoutes.Config must be static, no arguments");
                    }
                    m.setAccessible(true);
                    return (IndexerConfig) m.invoke(null);
                }
            }
        }
        return IndexerConfig.defaults();
    }

    /** The base URL of the {@code @ServerTest} server, for tests that open their own clients or raw sockets. */
    public static String baseUrl(WebServer server) {
        return "http://127.0.0.1:" + server.port();
    }

    private void route(HttpRouting.Builder routing) {
        IndexerRouting.routing(routing, indexer.components());
    }

    private static boolean supports(ParameterContext parameter) {
        Class<?> type = parameter.getParameter().getType();
        return type == HttpTestClient.class || type == IndexerRouting.Components.class;
    }

    private Object resolve(Class<?> type) {
        return type == HttpTestClient.class ? client : indexer.components();
    }

    @Override
    public void close() {
        if (client != null) {
            client.close();
        }
        indexer.close();
    }

    /** {@code @ServerTest}: the indexer's routing on Helidon's test server. */
    public static final class Server implements ServerJunitExtension {

        private IndexerHarness harness;

        @Override
        public void beforeAll(ExtensionContext context) {
            if (harness == null && context.getTestMethod().isEmpty()) {
                harness = forClass(context);
            }
        }

        @Override
        public void updateServerBuilder(WebServerConfig.Builder builder) {
            if (harness != null) {
                IndexerRouting.serverAnswers(
                        builder, harness.indexer.components().config());
                // as IndexerApp's server: with Nagle's algorithm on, an answer written in two parts (a scrape's)
                // waited for the client's delayed ACK, ~40 ms a request that the product never spends
                builder.connectionOptions(o -> o.tcpNoDelay(true));
                builder.routing(harness::route);
            }
        }

        @Override
        public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
            return harness != null && supports(parameter);
        }

        @Override
        public Object resolveParameter(
                ParameterContext parameter, ExtensionContext context, Class<?> type, WebServer server) {
            if (harness.client == null) {
                harness.client = new HttpTestClient(baseUrl(server));
            }
            return harness.resolve(type);
        }

        @Override
        public void afterAll(ExtensionContext context) {
            if (harness != null) {
                harness.close();
            }
        }
    }

    /** {@code @RoutingTest}: the indexer's routing behind Helidon's DirectClient, no socket. */
    public static final class Direct implements DirectJunitExtension {

        private IndexerHarness harness;

        @Override
        public void beforeAll(ExtensionContext context) {
            if (harness != null || context.getTestMethod().isPresent()) {
                return; // Helidon's routing extension calls beforeAll again before each test
            }
            harness = forClass(context);
            if (harness != null) {
                HttpRouting.Builder routing = HttpRouting.builder();
                harness.route(routing);
                harness.client = new HttpTestClient(new DirectClient(routing));
            }
        }

        @Override
        public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
            return harness != null && supports(parameter);
        }

        @Override
        public Object resolveParameter(ParameterContext parameter, ExtensionContext context, Class<?> type) {
            return harness.resolve(type);
        }

        @Override
        public void afterAll(ExtensionContext context) {
            if (harness != null) {
                harness.close();
            }
        }
    }
}

package io.kvindexer.indexer.http;

import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a Helidon {@code @ServerTest} or {@code @RoutingTest} class whose routing is the indexer's: the
 * {@link IndexerHarness} builds an indexer (from the class's {@link Config} method, or the defaults) for the class,
 * mounts {@link IndexerRouting} and injects {@link HttpTestClient} and {@link IndexerRouting.Components}.
 */
@Inherited
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface IndexerRoutes {

    /** On a static no-argument method returning the {@code IndexerConfig} of the class's indexer. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.METHOD)
    @interface Config {
    }
}

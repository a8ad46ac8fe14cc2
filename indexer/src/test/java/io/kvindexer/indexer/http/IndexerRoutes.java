package io.kvindexer.indexer.http;

import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a test class (usually an abstract class of test bodies) whose routing is the indexer's: a subclass that also
 * carries Helidon's {@code @ServerTest} or {@code @RoutingTest} gets, through {@link IndexerHarness}, an indexer
 * built from the {@link Config} method (or the defaults), {@link IndexerRouting} mounted, and {@link HttpTestClient}
 * and {@link IndexerRouting.Components} as parameters. {@link RoutesTest} runs every
 * such body both ways.
 */
@Inherited
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface IndexerRoutes {

    /** On a static no-argument method returning the {@code IndexerConfig} of the class's indexer. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.METHOD)
    @interface Config {}
}

package io.kvindexer.operator.support;

import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * For every test class of the module (JUnit's extension auto-detection: {@code junit-platform.properties},
 * {@code META-INF/services}): every {@code await()} looks at its condition at once, not only after
 * Awaitility's default poll delay (the 100 ms poll interval). An end-to-end test awaits a step that is often already
 * done dozens of times, and those 100 ms each add up to seconds; later looks keep the 100 ms interval. Awaitility's
 * defaults are JVM-wide, so they are put back after the class.
 */
public final class ImmediateFirstLook implements BeforeAllCallback, AfterAllCallback {
    @Override
    public void beforeAll(ExtensionContext context) {
        Awaitility.setDefaultPollDelay(Duration.ZERO);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        Awaitility.reset(); // no test sets another default: this puts back exactly what was there
    }
}

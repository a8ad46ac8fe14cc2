package io.kvindexer.operator.support;

import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * For every test class of the module (JUnit's extension auto-detection: {@code junit-platform.properties},
 * {@code META-INF/services}): every {@code await()} looks at its condition at once, not only after
 * Awaitility's default poll delay (the 100 ms poll interval). An end-to-end test awaits a step that is often already
 * done dozens of times, and those 100 ms each add up to seconds; later looks keep the 100 ms interval. Awaitility's
 * defaults are JVM-wide and classes run concurrently ({@code junit-platform.properties}): every class sets the same
 * default, and none puts it back while another may be awaiting.
 */
public final class ImmediateFirstLook implements BeforeAllCallback {
    @Override
    public void beforeAll(ExtensionContext context) {
        Awaitility.setDefaultPollDelay(Duration.ZERO);
    }
}

package io.kvindexer.indexer;

import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Every {@code await()} of the suite checks its condition at once, then at its poll interval: Awaitility's default
 * (no poll delay given) waits one poll interval before the first check, 100 ms or more on each of the hundreds of
 * awaits whose condition already holds. Registered for every test class by JUnit's extension auto-detection
 * ({@code junit-platform.properties}, {@code META-INF/services}); a condition that never holds fails as before.
 */
public final class AwaitChecksAtOnce implements BeforeAllCallback {

    static {
        Awaitility.setDefaultPollDelay(Duration.ZERO);
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        // the static initialiser did it, once per JVM
    }
}

package io.kvindexer.indexer.console;

import io.kvindexer.indexer.testkit.Executables;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * Headless Debian Chromium through its chromedriver (no browser download: both come from apt, see bin/run-tests).
 * Paths can be overridden with {@code -Dkvindexer.chromium=} and {@code -Dkvindexer.chromedriver=}.
 */
final class Browser implements AutoCloseable {

    static final Path SCREENSHOTS = Path.of("target", "console-screenshots");
    /** generous for a loaded 2-core machine; every wait polls a condition, none sleeps a fixed time */
    static final Duration WAIT = Duration.ofSeconds(45);

    final ChromeDriver driver;

    Browser() {
        File chromium = executable("kvindexer.chromium", "chromium");
        File chromedriver = executable("kvindexer.chromedriver", "chromedriver");
        ChromeOptions options = new ChromeOptions();
        options.setBinary(chromium);
        options.addArguments(
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--disable-extensions",
                "--no-first-run",
                "--hide-scrollbars",
                "--window-size=1280,800",
                "--force-prefers-reduced-motion");
        options.setCapability("goog:loggingPrefs", Map.of(LogType.BROWSER, "ALL"));
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(chromedriver)
                .usingAnyFreePort()
                .withLogOutput(java.io.OutputStream.nullOutputStream())
                .build();
        driver = new ChromeDriver(service, options);
        driver.manage().timeouts().pageLoadTimeout(WAIT).scriptTimeout(WAIT);
    }

    /** The property's path, else the first {@code name} on PATH. */
    private static File executable(String property, String name) {
        String given = System.getProperty(property);
        File f = given != null
                ? new File(given)
                : Executables.onPath(name).map(Path::toFile).orElse(new File("/usr/bin", name));
        if (!f.canExecute()) {
            throw new IllegalStateException(f + " is missing: the console's browser tests need Debian's chromium and "
                    + "chromium-driver (`apt-get install -y chromium chromium-driver`; bin/run-tests installs them "
                    + "when it runs as root), or -D" + property + "=<path>");
        }
        return f;
    }

    WebDriverWait waiting() {
        WebDriverWait wait = new WebDriverWait(driver, WAIT, Duration.ofMillis(100));
        wait.ignoring(org.openqa.selenium.StaleElementReferenceException.class); // the page redraws as data changes
        return wait;
    }

    /**
     * The viewport of a laptop or a phone. Through DevTools' device metrics, because a desktop window cannot be made
     * narrower than about 500 px; a phone width also turns on mobile layout rules (meta viewport).
     */
    void size(int width, int height) {
        driver.executeCdpCommand(
                "Emulation.setDeviceMetricsOverride",
                Map.of("width", width, "height", height, "deviceScaleFactor", 1, "mobile", width < 600));
        waiting().until(d -> ((Number) js("return document.documentElement.clientWidth")).intValue() == width);
    }

    Object js(String script, Object... args) {
        return ((JavascriptExecutor) driver).executeScript(script, args);
    }

    /**
     * Loads a console address from scratch (a hash-only change would not reload the page), and returns a wait for
     * what the page then shows.
     */
    WebDriverWait open(String url) {
        driver.get("about:blank");
        driver.get(url);
        return waiting();
    }

    Path screenshot(String name) {
        try {
            Files.createDirectories(SCREENSHOTS);
            Path to = SCREENSHOTS.resolve(name + ".png");
            Files.copy(
                    ((TakesScreenshot) driver).getScreenshotAs(OutputType.FILE).toPath(),
                    to,
                    StandardCopyOption.REPLACE_EXISTING);
            return to;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Browser console entries at SEVERE (errors, CSP violations, failed loads) since the last call. */
    List<String> severeLogs() {
        return driver.manage().logs().get(LogType.BROWSER).getAll().stream()
                .filter(e -> e.getLevel().intValue() >= Level.SEVERE.intValue())
                .map(LogEntry::getMessage)
                .toList();
    }

    @Override
    public void close() {
        driver.quit();
    }
}

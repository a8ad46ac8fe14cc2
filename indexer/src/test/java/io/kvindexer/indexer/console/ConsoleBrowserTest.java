package io.kvindexer.indexer.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.expiry.ExpiryPolicy;
import io.kvindexer.indexer.hash.BlockHasher;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.indexer.snapshot.SnapshotFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.openqa.selenium.By;
import org.openqa.selenium.Keys;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.interactions.Actions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The web console in headless Chromium against a real indexer with three simulated engines (real ZeroMQ): what
 * each view shows is compared with the JSON API's answers. Screenshots of every view go to
 * {@code target/console-screenshots/}; every test ends with an empty browser error log.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ConsoleBrowserTest {

    private static final String MODEL = "console-model";
    private static final int BLOCK = 4;
    /** 2 shared blocks, then 3 of engine 1's conversation */
    private static final int[] QUERY = IntStream.concat(IntStream.rangeClosed(1, 8), IntStream.rangeClosed(101, 112))
            .toArray();
    /** {@link #QUERY} as a query link spells it. */
    private static final String QUERY_IDS =
            Arrays.stream(QUERY).mapToObj(Integer::toString).collect(Collectors.joining(","));

    /** the page's refresh period in the tests, in seconds (operations.md, "Web console": {@code ?refresh=}) */
    private static final String REFRESH = "0.5";

    private static IndexerApp app;
    private static HttpTestClient http;
    private static final List<EngineSimulator> engines = new ArrayList<>();
    private static Browser browser;
    /** {@link #freshTokens}' next token id */
    private static int nextToken = 30_000;

    @BeforeAll
    static void start() throws Exception {
        // a TTL on the disk tier (which no other test uses) and a cap far above what the engines store: the
        // block expiry card has something to show
        app = IndexerApp.start(IndexerConfig.defaults().with(c -> {
            c.testEndpoints = true;
            c.expiry = new ExpiryPolicy(Map.of(StorageTier.DISK, Duration.ofSeconds(1)), 10_000);
        }));
        http = new HttpTestClient(app.baseUrl());
        for (int i = 1; i <= 3; i++) {
            EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults());
            engines.add(sim);
            http.post(
                            "/register",
                            "{\"instance_id\":" + i + ",\"endpoint\":\"" + sim.endpoint()
                                    + "\",\"replay_endpoint\":\"" + sim.replayEndpoint()
                                    + "\",\"model_name\":\"" + MODEL
                                    + "\",\"block_size\":" + BLOCK + "}")
                    .assertStatus(201);
        }
        await().atMost(Browser.WAIT).until(() -> engines.stream().allMatch(s -> s.subscriptions() >= 1));
        // engine 1 holds the whole query; 2 its shared head on device and 4 blocks on the host tier; 3 the head only
        engine(1).storeSequence(QUERY, BLOCK).get(30, TimeUnit.SECONDS);
        engine(2).storeSequence(Arrays.copyOf(QUERY, 8), BLOCK).get(30, TimeUnit.SECONDS);
        engine(2).storeSequence(Arrays.copyOf(QUERY, 16), BLOCK, "CPU", null).get(30, TimeUnit.SECONDS);
        engine(3).storeSequence(Arrays.copyOf(QUERY, 8), BLOCK).get(30, TimeUnit.SECONDS);
        await().atMost(Browser.WAIT).until(() -> queryJson().path("instances").size() == 3);
        browser = new Browser();
    }

    @AfterAll
    static void stop() {
        if (browser != null) {
            browser.close();
        }
        engines.forEach(EngineSimulator::close);
        if (http != null) {
            http.close();
        }
        if (app != null) {
            app.close();
        }
    }

    @AfterEach
    void noConsoleErrors() {
        assertThat(browser.severeLogs()).as("browser console errors").isEmpty();
    }

    private static EngineSimulator engine(int instance) {
        return engines.get(instance - 1);
    }

    private static String ui(String hash) {
        return ui(app.baseUrl(), hash);
    }

    /**
     * The console of the indexer at {@code base}, refreshing every {@link #REFRESH} s: the waits for what a refresh
     * brings are a quarter of the 2 s default's.
     */
    private static String ui(String base, String hash) {
        return base + "/ui/?refresh=" + REFRESH + hash;
    }

    private static JsonNode queryJson() {
        return http.post("/query", "{\"model_name\":\"" + MODEL + "\",\"token_ids\":" + Arrays.toString(QUERY) + "}")
                .json();
    }

    @Test
    @Order(1)
    void overviewListsTheEnginesAndTheirStatuses() {
        var wait = browser.open(ui(""));
        wait.until(d ->
                d.findElements(By.cssSelector("#workers tr[data-instance]")).size() == 3);
        eventually(() -> {
            for (int i = 1; i <= 3; i++) {
                WebElement row = browser.driver.findElement(By.cssSelector("#workers tr[data-instance='" + i + "']"));
                assertThat(row.getAttribute("data-status")).isEqualTo("active");
                assertThat(row.findElement(By.cssSelector(".listener .badges")).getText())
                        .isEqualTo("active exact");
                assertThat(row.getAttribute("data-exactness")).isEqualTo("exact");
                assertThat(row.getText()).contains(engine(i).endpoint(), MODEL + " / default");
            }
        });
        wait.until(ExpectedConditions.textToBe(By.cssSelector("#ready .text"), "ready"));
        JsonNode stats = http.get("/stats").json().get("indexes").get(0);
        eventually(() -> {
            WebElement index = browser.driver.findElement(By.cssSelector("#indexes tr[data-model='" + MODEL + "']"));
            assertThat(index.findElement(By.cssSelector("[data-field=blocks]")).getText())
                    .isEqualTo(Long.toString(stats.get("blocks").asLong()));
            assertThat(index.findElement(By.cssSelector("[data-field=memberships]"))
                            .getText())
                    .isEqualTo(Long.toString(stats.get("memberships").asLong()));
        });
        assertThat(browser.driver.findElements(By.cssSelector("#charts figure")))
                .hasSize(5);
        browser.screenshot("overview-1280x800");

        browser.size(390, 844);
        wait.until(d ->
                d.findElements(By.cssSelector("#workers tr[data-instance]")).size() == 3);
        assertNoPageWideScroll();
        browser.screenshot("overview-390x844");
        browser.size(1280, 800);
        assertNoPageWideScroll();
    }

    /** Assertions on a page that redraws every few seconds: retried while an element was replaced under them. */
    private static void eventually(org.awaitility.core.ThrowingRunnable check) {
        await().atMost(Browser.WAIT)
                .pollInterval(Duration.ofMillis(100))
                .ignoreExceptionsInstanceOf(StaleElementReferenceException.class)
                .untilAsserted(check);
    }

    /** At a phone's size the page does not scroll sideways (screenshot {@code <name>-390x844}); then back. */
    private static void assertFitsAPhone(String name) {
        browser.size(390, 844);
        assertNoPageWideScroll();
        browser.screenshot(name + "-390x844");
        browser.size(1280, 800);
    }

    /** Wide tables scroll inside their own box; the page itself never scrolls sideways. */
    private static void assertNoPageWideScroll() {
        Number overflow = (Number)
                browser.js("return document.documentElement.scrollWidth - document.documentElement.clientWidth");
        Object past = browser.js("const w = document.documentElement.clientWidth;"
                + " return [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > w + 1)"
                + ".map(e => e.tagName + '.' + e.className).slice(0, 8).join(' ')");
        assertThat(overflow.intValue())
                .as("horizontal overflow in px (elements past the edge: %s)", past)
                .isLessThanOrEqualTo(0);
    }

    @Test
    @Order(2)
    void aQueryTypedIntoTheFormShowsTheNumbersOfQueryJson() {
        var wait = browser.open(ui(""));
        // keyboard only: tab to the Query link, follow it, tab into the form
        WebElement queryLink = browser.driver.findElement(By.cssSelector("nav a[data-view=query]"));
        WebElement focused = browser.driver.switchTo().activeElement();
        for (int i = 0; i < 10 && !queryLink.equals(focused); i++) {
            new Actions(browser.driver).sendKeys(Keys.TAB).perform();
            focused = browser.driver.switchTo().activeElement();
        }
        assertThat(focused).as("the Query link is reachable with Tab").isEqualTo(queryLink);
        new Actions(browser.driver).sendKeys(Keys.ENTER).perform();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("query-form")));
        wait.until(d -> new Select(d.findElement(By.id("q-model")))
                .getOptions().stream().anyMatch(o -> o.getText().equals(MODEL)));
        new Select(browser.driver.findElement(By.id("q-model"))).selectByVisibleText(MODEL);
        WebElement input = browser.driver.findElement(By.id("q-input"));
        input.clear();
        input.sendKeys(Arrays.stream(QUERY).mapToObj(Integer::toString).collect(Collectors.joining(", ")));
        new Actions(browser.driver).sendKeys(Keys.TAB).perform(); // to the Run button
        WebElement run = browser.driver.switchTo().activeElement();
        assertThat(run.getText()).isEqualTo("Run query");
        new Actions(browser.driver).sendKeys(Keys.ENTER).perform();

        assertShowsQueryJson(queryJson());
        String url = browser.driver.getCurrentUrl();
        assertThat(url).contains("#query?model_name=" + MODEL + "&tenant_id=default&token_ids=1,2,3,4,5,6,7,8,101,");
        browser.screenshot("query-1280x800");

        // the address alone, loaded from scratch, runs the same query
        browser.open(url);
        assertShowsQueryJson(queryJson());
        assertFitsAPhone("query");
    }

    @Test
    @Order(3)
    void deepLinksWithTokenIdsOrBlockHashesRunOnLoad() {
        browser.open(ui("#query?model_name=" + MODEL + "&tenant_id=default&token_ids=" + QUERY_IDS));
        assertShowsQueryJson(queryJson());

        long[] local = BlockHasher.localHashes(QUERY, BLOCK, BlockHasher.seed(null));
        String hashes = LongStream.of(local).mapToObj(Long::toUnsignedString).collect(Collectors.joining(","));
        JsonNode byHash = http.post(
                        "/query_by_hash", "{\"model_name\":\"" + MODEL + "\",\"block_hashes\":[" + hashes + "]}")
                .json();
        assertThat(byHash.path("instances").size()).isEqualTo(3);
        browser.open(ui("#query?model_name=" + MODEL + "&block_hashes=" + hashes));
        assertShowsQueryJson(byHash);
        assertThat(browser.driver
                        .findElement(By.cssSelector("input[name=kind][value=block_hashes]"))
                        .isSelected())
                .isTrue();
    }

    /** Every instance of the JSON as a card with the same longest_matched, gpu, cpu, disk and per-rank numbers. */
    private static void assertShowsQueryJson(JsonNode expected) {
        JsonNode instances = expected.get("instances");
        browser.waiting()
                .until(d ->
                        d.findElements(By.cssSelector("#q-result .instance")).size() == instances.size());
        eventually(() -> assertCardsShow(instances));
    }

    private static void assertCardsShow(JsonNode instances) {
        Map<String, Map<String, Long>> shown = new LinkedHashMap<>();
        Map<String, Map<String, Long>> json = new LinkedHashMap<>();
        for (var e : instances.properties()) {
            WebElement card = browser.driver.findElement(
                    By.cssSelector("#q-result .instance[data-instance='" + e.getKey() + "']"));
            Map<String, Long> values = new LinkedHashMap<>();
            Map<String, Long> want = new LinkedHashMap<>();
            for (String field : List.of("longest_matched", "gpu", "cpu", "disk")) {
                WebElement bar = card.findElement(By.cssSelector(":scope > .bar-row[data-field=" + field + "]"));
                values.put(
                        field,
                        Long.parseLong(
                                bar.findElement(By.cssSelector(".bar-value")).getText()));
                want.put(field, e.getValue().get(field).asLong());
            }
            for (var r : e.getValue().get("dp").properties()) {
                WebElement rank = card.findElement(By.cssSelector(".rank[data-rank='" + r.getKey() + "'] .bar-value"));
                values.put("dp " + r.getKey(), Long.parseLong(rank.getText()));
                want.put("dp " + r.getKey(), r.getValue().asLong());
            }
            shown.put(e.getKey(), values);
            json.put(e.getKey(), want);
        }
        assertThat(shown).isEqualTo(json);
        // and the numbers are the ones this fixture was built for, not just equal to each other
        assertThat(json.get("1").get("gpu")).isEqualTo(QUERY.length);
        assertThat(json.get("2")).containsEntry("gpu", 8L).containsEntry("cpu", 16L);
        assertThat(json.get("3")).containsEntry("gpu", 8L).containsEntry("disk", 8L);
    }

    @Test
    @Order(4)
    void theCacheMapShowsBlocksPerWorkerAndTheMostSharedPrefixes() {
        var wait = browser.open(ui("#cache?model_name=" + MODEL + "&tenant_id=default"));
        wait.until(d ->
                d.findElements(By.cssSelector("#worker-blocks tr[data-worker]")).size() == 3);
        JsonNode workers = http.get("/stats?model_name=" + MODEL).json().at("/indexes/0/workers");
        eventually(() -> {
            for (JsonNode w : workers) {
                String key =
                        w.get("instance_id").asText() + ":" + w.get("dp_rank").asText();
                WebElement row =
                        browser.driver.findElement(By.cssSelector("#worker-blocks tr[data-worker='" + key + "']"));
                for (String tier : List.of("device", "host_pinned", "disk", "external")) {
                    assertThat(row.findElement(By.cssSelector("[data-tier=" + tier + "]"))
                                    .getText())
                            .as(key + " " + tier)
                            .isEqualTo(Long.toString(w.get("blocks").get(tier).asLong()));
                }
            }
        });
        assertThat(workers.get(1).at("/blocks/host_pinned").asLong()).isEqualTo(4);
        wait.until(
                d -> !d.findElements(By.cssSelector("#prefixes tr[data-depth]")).isEmpty());
        JsonNode first = http.get("/prefixes?model_name=" + MODEL).json().at("/prefixes/0");
        assertThat(first.get("workers").asInt()).isEqualTo(3); // the 2-block head all three hold
        assertThat(first.get("depth").asInt()).isEqualTo(2);
        eventually(() -> {
            WebElement row = browser.driver.findElement(By.cssSelector("#prefixes tr[data-depth]"));
            assertThat(row.getAttribute("data-workers")).isEqualTo("3");
            assertThat(row.getAttribute("data-depth")).isEqualTo("2");
            assertThat(row.findElement(By.cssSelector(".holders")).getText()).isEqualTo("1:0, 2:0, 3:0");
        });
        // the pickers' card has a card's padding, and room before the card under it
        assertThat(browser.js("const form = document.getElementById('cache-form');"
                        + " const card = document.querySelector('#view-cache .grid .card');"
                        + " return [getComputedStyle(form).paddingTop === getComputedStyle(card).paddingTop,"
                        + " card.getBoundingClientRect().top - form.getBoundingClientRect().bottom >= 8]"))
                .isEqualTo(List.of(true, true));
        browser.screenshot("cache-map-1280x800");
        assertFitsAPhone("cache-map");
    }

    @Test
    @Order(5)
    void theChartsUpdateWhenEventsArrive() throws Exception {
        var wait = browser.open(ui("#overview"));
        By applied = By.id("chart-applied");
        wait.until(d -> samples(d.findElement(applied)) >= 2);
        double before = Double.parseDouble(browser.driver.findElement(applied).getAttribute("data-total"));
        int[] more = IntStream.rangeClosed(5001, 5040).toArray();
        engine(3).storeSequence(more, BLOCK).get(30, TimeUnit.SECONDS);
        wait.until(d -> Double.parseDouble(d.findElement(applied).getAttribute("data-total")) > before);
        wait.until(d -> {
            String rate = d.findElement(applied).getAttribute("data-rate");
            return rate != null && !rate.isEmpty() && Double.parseDouble(rate) > 0;
        });
        String path = browser.driver
                .findElement(By.cssSelector("#chart-applied path.line"))
                .getAttribute("d");
        assertThat(path).startsWith("M").contains("L");
        assertThat(browser.driver
                        .findElement(By.cssSelector("#chart-applied .chart-value"))
                        .getText())
                .isNotEqualTo("0");
        browser.screenshot("overview-charts-1280x800");
    }

    private static int samples(WebElement chart) {
        String s = chart.getAttribute("data-samples");
        return s == null || s.isEmpty() ? 0 : Integer.parseInt(s);
    }

    /**
     * An engine that really stops: its listener keeps Dynamo's status ({@code active}, the SUB socket reconnects by
     * itself) and the page shows it disconnected, with the {@code last_error} of {@code /workers}; then the other
     * states the listener reports: paused (Dynamo's test control), and the row gone once the engine is unregistered
     * (what the operator does when an engine pod goes away).
     */
    @Test
    @Order(6)
    void afterAnEngineStopsItsListenerStateChangesOnThePage() {
        var wait = browser.open(ui("#overview"));
        By row = By.cssSelector("#workers tr[data-instance='2']");
        wait.until(d -> d.findElements(row).size() == 1);
        eventually(() -> {
            assertThat(browser.driver.findElement(row).getAttribute("data-status"))
                    .isEqualTo("active");
            assertThat(browser.driver.findElement(row).getAttribute("data-connection"))
                    .isEqualTo("connected");
        });
        assertThat(browser.driver.findElements(By.cssSelector("#workers .badge.disconnected")))
                .isEmpty();

        engine(2).close();
        // noticed on the socket at once, on the page at its next refresh: a second or two, with room for a busy host
        new WebDriverWait(browser.driver, Duration.ofSeconds(15), Duration.ofMillis(100))
                .until(d -> d.findElements(By.cssSelector("#workers tr[data-instance='2'] .badge.disconnected"))
                                .size()
                        == 1);
        JsonNode listener = http.get("/workers?model_name=" + MODEL).json().findValues("listeners").stream()
                .map(l -> l.get("0"))
                .filter(l -> l.get("endpoint").asText().equals(engine(2).endpoint()))
                .findFirst()
                .orElseThrow();
        assertThat(listener.get("connected").asBoolean()).isFalse();
        assertThat(listener.get("status").asText()).isEqualTo("active");
        String lastError = listener.get("last_error").asText();
        assertThat(lastError).startsWith("engine connection lost at ");
        eventually(() -> {
            WebElement r = browser.driver.findElement(row);
            assertThat(r.getAttribute("data-connection")).isEqualTo("disconnected");
            assertThat(r.getAttribute("data-status")).isEqualTo("active");
            assertThat(r.findElement(By.cssSelector(".listener .badges")).getText())
                    .isEqualTo("active exact disconnected");
            // since when, as text on the page (a tooltip is out of reach of the keyboard and of touch)
            WebElement note = r.findElement(By.cssSelector(".note[data-field=disconnected]"));
            assertThat(visibleText(note)).matches("engine connection down since \\d\\d:\\d\\d:\\d\\d");
            assertThat(epochMillis(note))
                    .isEqualTo(listener.get("disconnected_since_ms").asLong());
            assertThat(r.findElement(By.cssSelector(".badge.disconnected")).getAttribute("data-since"))
                    .isEqualTo(listener.get("disconnected_since_ms").asText());
            assertThat(r.findElement(By.cssSelector(".error")).getText()).isEqualTo(lastError);
        });
        eventually(() -> assertThat(browser.driver
                        .findElement(By.cssSelector("#workers tr[data-instance='1']"))
                        .getAttribute("data-connection"))
                .isEqualTo("connected"));
        browser.screenshot("overview-engine-disconnected-1280x800");

        http.post("/test/pause_listener", "{\"instance_id\":2}").assertStatus(200);
        wait.until(ExpectedConditions.textToBe(
                By.cssSelector("#workers tr[data-instance='2'] .listener .badges"), "paused degraded"));
        assertThat(http.get("/workers?model_name=" + MODEL).json().findValuesAsText("status"))
                .contains("paused");
        eventually(() -> assertThat(browser.driver
                        .findElement(By.cssSelector("#workers tr[data-instance='1']"))
                        .getAttribute("data-status"))
                .isEqualTo("active"));
        browser.screenshot("overview-engine-paused-1280x800");

        http.post("/unregister", "{\"instance_id\":2,\"model_name\":\"" + MODEL + "\"}")
                .assertStatus(200);
        wait.until(d -> d.findElements(row).isEmpty());
        wait.until(d ->
                d.findElements(By.cssSelector("#workers tr[data-instance]")).size() == 2);
    }

    @Test
    @Order(7)
    void withAuthOnThePageAsksForTheTokenOnceAndStaysPublic() throws Exception {
        try (IndexerApp secured = IndexerApp.start(IndexerConfig.defaults().with(c -> c.authToken = "console-token"));
                HttpTestClient client = new HttpTestClient(secured.baseUrl())) {
            String registration = "{\"instance_id\":9,\"endpoint\":\""
                    + engine(1).endpoint() + "\",\"model_name\":\"" + MODEL + "\",\"block_size\":" + BLOCK + "}";
            client.post("/register", registration).assertStatus(401);
            client.request(
                            "POST",
                            "/register",
                            "application/json",
                            registration.getBytes(java.nio.charset.StandardCharsets.UTF_8),
                            "Authorization",
                            "Bearer console-token")
                    .assertStatus(201);
            var wait = browser.open(ui(secured.baseUrl(), "#overview"));
            wait.until(ExpectedConditions.textToBe(By.cssSelector("#ready .text"), "ready"));
            // the overview needs no token: no prompt
            assertThat(browser.driver.findElement(By.id("token-dialog")).getAttribute("open"))
                    .isNull();

            browser.open(ui(secured.baseUrl(), "#cache"));
            wait.until(d -> d.findElement(By.id("token-dialog")).getAttribute("open") != null);
            WebElement token = browser.driver.findElement(By.id("token-input"));
            token.sendKeys("console-token");
            token.sendKeys(Keys.ENTER);
            wait.until(d -> d.findElement(By.id("token-dialog")).getAttribute("open") == null);
            // past the token check: this replica's index holds nothing yet
            wait.until(ExpectedConditions.textToBe(By.id("c-prefixes"), "No block is held yet."));
            browser.js("location.hash = '#overview'");
            wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("view-overview")));
            browser.js("location.hash = '#cache?model_name=" + MODEL + "'");
            wait.until(ExpectedConditions.textToBe(By.id("c-prefixes"), "No block is held yet."));
            assertThat(browser.driver.findElement(By.id("token-dialog")).getAttribute("open"))
                    .as("asked once")
                    .isNull();
            assertThat(browser.js("return sessionStorage.getItem('kv-indexer-token /')"))
                    .isEqualTo("console-token");
            // the 401 that made the page ask is the one expected failed load; read while the server is up and
            // leave the page before it stops, so a poll in flight is not reset by the close
            List<String> errors = browser.severeLogs();
            assertThat(errors).allMatch(m -> m.contains("/prefixes") && m.contains("401"));
            browser.driver.get("about:blank");
        }
    }

    @Test
    @Order(8)
    void theExpiryCardShowsTheBoundsAndWhatTheyRemovedPerTier() throws Exception {
        var wait = browser.open(ui("#overview"));
        wait.until(d -> d.findElements(By.cssSelector("#expiry tr[data-tier]")).size() == 4);
        WebElement disk = browser.driver.findElement(By.cssSelector("#expiry tr[data-tier='disk']"));
        assertThat(disk.findElement(By.cssSelector("[data-field=ttl]")).getText())
                .isEqualTo("1s");
        assertThat(browser.driver
                        .findElement(By.cssSelector("#expiry tr[data-tier='device'] [data-field=ttl]"))
                        .getText())
                .isEqualTo("–");
        assertThat(browser.driver
                        .findElement(By.cssSelector("#expiry [data-field=cap]"))
                        .getText())
                .contains("10,000 blocks per worker and tier");

        engine(3)
                .storeSequence(IntStream.rangeClosed(7001, 7020).toArray(), BLOCK, "DISK", null)
                .get(30, TimeUnit.SECONDS);
        String series = "dynamo_kvindexer_blocks_expired_total{reason=\"ttl\",tier=\"disk\"} ";
        await().atMost(Browser.WAIT).until(() -> http.get("/metrics").body().contains(series + "5.0"));
        eventually(() -> assertThat(browser.driver
                        .findElement(By.cssSelector("#expiry tr[data-tier='disk'] [data-field=ttl-expired]"))
                        .getText())
                .isEqualTo("5"));
        assertThat(browser.driver
                        .findElement(By.cssSelector("#expiry tr[data-tier='disk'] [data-field=capacity-evicted]"))
                        .getText())
                .isEqualTo("0");
        browser.screenshot("overview-expiry-1280x800");
    }

    /**
     * A worker whose engine lost batches no replay can bring: its badge turns {@code degraded}, the reason and since
     * when of {@code /workers} written under it, and back to {@code exact} when the engine clears its cache.
     */
    @Test
    @Order(9)
    void aDegradedWorkerShowsItsExactnessBadgeUntilItsEngineClears() throws Exception {
        var wait = browser.open(ui("#overview"));
        By badge = By.cssSelector("#workers tr[data-instance='3'] .badge.exactness");
        wait.until(d -> d.findElements(badge).size() == 1);
        eventually(() -> assertThat(browser.driver.findElement(badge).getText()).isEqualTo("exact"));

        engine(3).skip(2); // batches the engine never buffered: the gap cannot be replayed
        engine(3)
                .storeSequence(IntStream.rangeClosed(8001, 8008).toArray(), BLOCK)
                .get(30, TimeUnit.SECONDS);
        await().atMost(Browser.WAIT)
                .until(() -> http.get("/workers?model_name=" + MODEL)
                        .json()
                        .findValuesAsText("exactness")
                        .contains("degraded"));
        JsonNode degraded = http.get("/workers?model_name=" + MODEL).json().findValues("listeners").stream()
                .map(l -> l.get("0"))
                .filter(l -> l.get("endpoint").asText().equals(engine(3).endpoint()))
                .findFirst()
                .orElseThrow();
        wait.until(ExpectedConditions.textToBe(badge, "degraded"));
        eventually(() -> {
            WebElement b = browser.driver.findElement(badge);
            WebElement note = browser.driver.findElement(
                    By.cssSelector("#workers tr[data-instance='3'] .note[data-field=exactness]"));
            assertThat(visibleText(note))
                    .matches("degraded since \\d\\d:\\d\\d:\\d\\d: "
                            + java.util.regex.Pattern.quote(
                                    degraded.get("exactness_reason").asText()));
            assertThat(epochMillis(note))
                    .isEqualTo(degraded.get("exactness_since_ms").asLong());
            assertThat(b.getAttribute("data-since"))
                    .isEqualTo(degraded.get("exactness_since_ms").asText());
            assertThat(browser.driver
                            .findElement(By.cssSelector("#workers tr[data-instance='3']"))
                            .getAttribute("data-exactness"))
                    .isEqualTo("degraded");
        });
        browser.screenshot("overview-worker-degraded-1280x800");

        // its query card (of what it stored after the gap) says its match may be short, as /query's exact does
        String head =
                IntStream.rangeClosed(8001, 8008).mapToObj(Integer::toString).collect(Collectors.joining(","));
        JsonNode answer = http.post("/query", "{\"model_name\":\"" + MODEL + "\",\"token_ids\":[" + head + "]}")
                .json()
                .get("instances");
        assertThat(answer.at("/3/exact").asBoolean(true)).as(answer.toString()).isFalse();
        browser.open(ui("#query?model_name=" + MODEL + "&tenant_id=default&token_ids=" + head));
        By inexact = By.cssSelector("#q-result .instance[data-instance='3'] [data-field=exact]");
        wait.until(d -> !d.findElements(inexact).isEmpty());
        assertThat(visibleText(browser.driver.findElement(inexact))).startsWith("not exact");
        browser.open(ui("#overview"));

        engine(3).publish(EngineSimulator.cleared()).get(30, TimeUnit.SECONDS);
        wait.until(ExpectedConditions.textToBe(badge, "exact"));
    }

    /**
     * An engine that is connected but has published nothing (events off, or the wrong port registered) shows "no
     * events"; its first batch takes the badge away and puts its seq in the row.
     */
    @Test
    @Order(10)
    void aConnectedEngineThatPublishesNothingShowsNoEventsUntilItsFirstBatch() throws Exception {
        try (EngineSimulator quiet = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            http.post(
                            "/register",
                            "{\"instance_id\":9,\"endpoint\":\"" + quiet.endpoint() + "\",\"model_name\":\"" + MODEL
                                    + "\",\"block_size\":" + BLOCK + "}")
                    .assertStatus(201);
            var wait = browser.open(ui("#overview"));
            By badge = By.cssSelector("#workers tr[data-instance='9'] .badge.silent");
            wait.until(d -> d.findElements(badge).size() == 1);
            assertThat(browser.driver.findElement(badge).getText()).isEqualTo("no events");
            assertThat(visibleText(browser.driver.findElement(
                            By.cssSelector("#workers tr[data-instance='9'] .note[data-field=silent]"))))
                    .startsWith("connected, but no batch yet: are its KV events on");
            assertThat(browser.driver
                            .findElement(By.cssSelector("#workers tr[data-instance='9'] [data-field=last-batch]"))
                            .getText())
                    .isEqualTo("none yet");
            browser.screenshot("overview-engine-silent-1280x800");

            quiet.storeSequence(IntStream.rangeClosed(9001, 9008).toArray(), BLOCK)
                    .get(30, TimeUnit.SECONDS);
            long seq = quiet.nextSeq() - 1;
            wait.until(d -> d.findElements(badge).isEmpty());
            By row = By.cssSelector("#workers tr[data-instance='9']");
            eventually(() -> {
                assertThat(browser.driver.findElement(row).getAttribute("data-last-seq"))
                        .isEqualTo(Long.toString(seq));
                WebElement batch =
                        browser.driver.findElement(row).findElement(By.cssSelector("[data-field=last-batch]"));
                assertThat(visibleText(batch)).matches("seq " + seq + " at \\d\\d:\\d\\d:\\d\\d");
            });
            http.post("/unregister", "{\"instance_id\":9,\"model_name\":\"" + MODEL + "\"}")
                    .assertStatus(200);

            // the same engine registered at its replay ROUTER: not connected, and the row says why
            http.post(
                            "/register",
                            "{\"instance_id\":8,\"endpoint\":\"" + quiet.replayEndpoint() + "\",\"model_name\":\""
                                    + MODEL + "\",\"block_size\":" + BLOCK + "}")
                    .assertStatus(201);
            By why = By.cssSelector("#workers tr[data-instance='8'] td.error.connect");
            wait.until(d -> d.findElements(why).size() == 1
                    && d.findElement(why).getText().contains("ROUTER"));
            assertThat(browser.driver
                            .findElement(By.cssSelector("#workers tr[data-instance='8']"))
                            .getAttribute("data-connection"))
                    .isEqualTo("not-connected");
            http.post("/unregister", "{\"instance_id\":8,\"model_name\":\"" + MODEL + "\"}")
                    .assertStatus(200);
        }
    }

    /**
     * The Process card: this replica's heap, descriptors, threads, JVM, where its state came from and its snapshots,
     * as its own /metrics has them.
     */
    @Test
    @Order(11)
    void theProcessCardShowsTheReplicasHeapDescriptorsThreadsAndJvm() {
        var wait = browser.open(ui("#overview"));
        By heap = By.cssSelector("#process [data-field=heap]");
        wait.until(d -> d.findElements(heap).size() == 1
                && d.findElement(heap).getText().contains(" of "));
        assertThat(browser.driver.findElement(heap).getText())
                .matches("[0-9.]+ (B|KiB|MiB|GiB) of [0-9.]+ (MiB|GiB) \\(\\d+ %\\)");
        long maxFds = (long) http.metric("process_max_fds");
        assertThat(field("fds")).matches("[0-9,]+ of " + String.format(java.util.Locale.US, "%,d", maxFds));
        assertThat(Long.parseLong(field("fds").split(" ")[0].replace(",", ""))).isPositive();
        assertThat(Integer.parseInt(field("threads").replace(",", ""))).isPositive();
        assertThat(field("resident")).matches("[0-9.]+ (MiB|GiB)");
        assertThat(field("uptime")).matches("\\d+ (s|min)|\\d+ h \\d+ min");
        assertThat(field("jvm")).startsWith(System.getProperty("java.runtime.version") + " (");
        assertThat(field("state")).as("no peers, no snapshot dir").isEqualTo("nothing: started empty");
        assertThat(field("snapshots")).as("no snapshot dir").isEqualTo("not kept (no --snapshot-dir)");
        assertThat(browser.driver.findElements(By.cssSelector("#process [data-field=snapshot-age]")))
                .as("no snapshot dir: no freshness")
                .isEmpty();
        assertThat(browser.js("return import('/ui/process.js').then(m => [m.snapshots(15.2 * 1048576, 80 * 1073741824),"
                        + " m.snapshots(900 * 1048576, 1024 * 1048576), m.snapshots(2048, null)])"))
                .isEqualTo(List.of(
                        "15.2 MiB newest, 80.0 GiB free",
                        "900 MiB newest, 1.00 GiB free: the next may not fit",
                        "2.00 KiB newest"));
        assertThat(browser.js("return import('/ui/process.js').then(m => [m.stateFrom('peer', 0.331),"
                        + " m.stateFrom('snapshot', 12.4), m.stateFrom('blank_peer', 1.02)])"))
                .isEqualTo(List.of(
                        "a peer in 0.33 s", "its snapshot in 12 s", "a blank peer: registrations only in 1.0 s"));
        // the formatter's edges, whatever this replica's own figures are (a resident 1,010 MiB read "1.01e+3 MiB")
        assertThat(browser.js("return import('/ui/process.js').then(m => [m.bytes(500), m.bytes(15.2 * 1024),"
                        + " m.bytes(812 * 1048576), m.bytes(1010 * 1048576), m.bytes(1023.9 * 1048576),"
                        + " m.bytes(1.5 * 1073741824)])"))
                .isEqualTo(List.of("500 B", "15.2 KiB", "812 MiB", "1010 MiB", "1024 MiB", "1.50 GiB"));
        browser.screenshot("overview-process-1280x800");
    }

    /**
     * The server dies under an open page: readiness turns "unreachable" (not the green "ready" it said last), the
     * live cards are dimmed with the time of their last update, and the banner says so in words; when a server
     * answers at the address again, all of it returns to normal.
     */
    @Test
    @Order(12)
    void whenTheServerStopsAnsweringThePageSaysSoAndShowsItsFiguresAsStale() throws Exception {
        IndexerApp dying = IndexerApp.start(IndexerConfig.defaults());
        int port = java.net.URI.create(dying.baseUrl()).getPort();
        IndexerApp back = null;
        boolean stopped = false;
        try {
            var wait = browser.open(ui(dying.baseUrl(), "#overview"));
            wait.until(d -> !d.findElements(By.cssSelector("#process [data-field=uptime]"))
                    .isEmpty());
            wait.until(d -> "true".equals(d.findElement(By.id("ready")).getAttribute("data-ready")));
            assertThat(browser.driver.findElements(By.cssSelector(".stale-note")))
                    .noneMatch(WebElement::isDisplayed);
            assertThat(opacity("#process")).isEqualTo(1.0);

            dying.close();
            stopped = true;
            wait.until(ExpectedConditions.textToBe(By.cssSelector("#ready .text"), "unreachable"));
            assertThat(browser.driver.findElement(By.id("ready")).getAttribute("data-ready"))
                    .isEqualTo("unreachable");
            WebElement banner = browser.driver.findElement(By.id("banner"));
            assertThat(banner.isDisplayed()).isTrue();
            assertThat(banner.getText())
                    .matches("The indexer at http://[^ ]+:" + port
                            + "/ does not answer \\(since \\d\\d:\\d\\d:\\d\\d\\); showing what it said last");
            List<WebElement> notes = browser.driver.findElements(By.cssSelector(".stale-note"));
            assertThat(notes).hasSize(6).allMatch(WebElement::isDisplayed);
            assertThat(notes.get(0).getText()).matches("last updated \\d\\d:\\d\\d:\\d\\d");
            for (String live : List.of("#charts", "#process", "#workers", "#expiry")) {
                assertThat(opacity(live)).as(live + " dimmed").isLessThan(0.6);
            }
            browser.screenshot("overview-unreachable-1280x800");

            back = IndexerApp.start(IndexerConfig.defaults().with(c -> c.port = port));
            wait.until(d -> "true".equals(d.findElement(By.id("ready")).getAttribute("data-ready")));
            wait.until(d -> !d.findElement(By.id("banner")).isDisplayed());
            assertThat(browser.driver.findElements(By.cssSelector(".stale-note")))
                    .noneMatch(WebElement::isDisplayed);
            assertThat(opacity("#process")).isEqualTo(1.0);
            // the failed loads while the server was down are the expected browser errors
            assertThat(browser.severeLogs())
                    .allMatch(m -> m.contains("ERR_CONNECTION_REFUSED") || m.contains("Failed to fetch"));
            browser.driver.get("about:blank");
        } finally {
            if (!stopped) {
                dying.close();
            }
            if (back != null) {
                back.close();
            }
        }
    }

    /**
     * A query link without a tenant runs for "default", so the tenant picker shows "default", not the tenant of the
     * query before it (which a Run query would then have sent).
     */
    @Test
    @Order(13)
    void aQueryLinkWithoutATenantShowsTheDefaultTenantInThePicker() {
        registerElsewhere(21, "t2");
        try {
            browser.open(ui("#query?model_name=" + MODEL + "&tenant_id=t2&token_ids=5,6,7"));
            browser.waiting()
                    .until(d ->
                            !d.findElements(By.cssSelector("#q-result .empty")).isEmpty());
            assertThat(new Select(browser.driver.findElement(By.id("q-tenant")))
                            .getFirstSelectedOption()
                            .getText())
                    .isEqualTo("t2");
            browser.js("location.hash = arguments[0]", "#query?model_name=" + MODEL + "&token_ids=" + QUERY_IDS);
            assertShowsCards(queryJson());
            assertThat(new Select(browser.driver.findElement(By.id("q-tenant")))
                            .getFirstSelectedOption()
                            .getText())
                    .as("the tenant the results are for")
                    .isEqualTo("default");
        } finally {
            unregisterElsewhere(21, "t2");
        }
    }

    /**
     * The Overview's "query" link of another index (here the same model's tenant t2) opens the Query view without
     * the previous index's result cards, hint and "Link to this query".
     */
    @Test
    @Order(14)
    void followingAnotherIndexsQueryLinkClearsThePreviousResults() {
        registerElsewhere(22, "t2");
        try {
            browser.open(ui("#query?model_name=" + MODEL + "&tenant_id=default&token_ids=" + QUERY_IDS));
            assertShowsCards(queryJson());
            assertThat(browser.driver.findElement(By.id("q-hint")).getText()).isNotEmpty();
            assertThat(browser.driver.findElement(By.id("q-link")).isDisplayed())
                    .isTrue();

            browser.js("location.hash = '#overview'");
            By link = By.cssSelector("#indexes tr[data-model='" + MODEL + "'][data-tenant='t2'] td.links a:last-child");
            browser.waiting()
                    .until(ExpectedConditions.elementToBeClickable(link))
                    .click();
            browser.waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("query-form")));
            browser.waiting()
                    .until(d -> "t2"
                            .equals(new Select(d.findElement(By.id("q-tenant")))
                                    .getFirstSelectedOption()
                                    .getText()));
            assertThat(browser.driver.findElements(By.cssSelector("#q-result > *")))
                    .as("the previous index's results")
                    .isEmpty();
            assertThat(browser.driver.findElement(By.id("q-hint")).getText()).isEmpty();
            assertThat(browser.driver.findElement(By.id("q-link")).isDisplayed())
                    .isFalse();
        } finally {
            unregisterElsewhere(22, "t2");
        }
    }

    /**
     * A worker registered where nothing listens has never connected: /workers says {@code "connected":false} with no
     * {@code disconnected_since_ms}, and its row shows an amber "not connected" badge beside its status, "pending" until
     * it first connects.
     */
    @Test
    @Order(15)
    void aWorkerThatNeverConnectedShowsNotConnected() {
        registerElsewhere(23, "t2");
        try {
            await().atMost(Browser.WAIT)
                    .until(() -> http.get("/workers?model_name=" + MODEL + "&tenant_id=t2")
                            .json()
                            .findValuesAsText("connect_error")
                            .contains("Connection refused"));
            JsonNode listener = http.get("/workers?model_name=" + MODEL + "&tenant_id=t2")
                    .json()
                    .at("/0/listeners/0");
            assertThat(listener.get("connected").asBoolean()).isFalse();
            assertThat(listener.has("disconnected_since_ms")).isFalse();
            assertThat(listener.get("status").asText()).isEqualTo("pending");

            var wait = browser.open(ui("#overview"));
            By badge = By.cssSelector("#workers tr[data-instance='23'] .badge.not-connected");
            wait.until(d -> d.findElements(badge).size() == 1);
            WebElement b = browser.driver.findElement(badge);
            assertThat(b.isDisplayed()).isTrue();
            assertThat(b.getText()).isEqualTo("not connected");
            assertThat(b.getAttribute("title")).endsWith(": Connection refused");
            assertThat(browser.js(
                            "const probe = document.createElement('span');"
                                    + " probe.style.color = 'var(--warn)'; document.body.append(probe);"
                                    + " const warn = getComputedStyle(probe).color; probe.remove();"
                                    + " return getComputedStyle(arguments[0]).color === warn",
                            b))
                    .as("amber")
                    .isEqualTo(true);
            assertThat(browser.driver
                            .findElement(By.cssSelector("#workers tr[data-instance='23'] .listener .badges"))
                            .getText())
                    .isEqualTo("pending exact not connected");
            assertThat(browser.driver.findElements(
                            By.cssSelector("#workers tr[data-instance='1'] .badge.not-connected")))
                    .isEmpty();
            browser.screenshot("overview-engine-never-connected-1280x800");
        } finally {
            unregisterElsewhere(23, "t2");
        }
    }

    /**
     * A typo after a good query: the error shows alone, without the previous query's hint ("20 tokens = 5 full
     * blocks of 4") and without a "Link to this query" for the input that cannot run.
     */
    @Test
    @Order(16)
    void anInvalidQueryClearsThePreviousHintAndLink() {
        browser.open(ui("#query?model_name=" + MODEL + "&tenant_id=default&token_ids=" + QUERY_IDS));
        assertShowsCards(queryJson());
        assertThat(browser.driver.findElement(By.id("q-hint")).getText())
                .isEqualTo(QUERY.length + " tokens = " + QUERY.length / BLOCK + " full blocks of " + BLOCK);
        assertThat(browser.driver.findElement(By.id("q-link")).isDisplayed()).isTrue();

        WebElement input = browser.driver.findElement(By.id("q-input"));
        input.clear();
        input.sendKeys("12 abc");
        browser.driver
                .findElement(By.cssSelector("#query-form button[type=submit]"))
                .click();
        browser.waiting()
                .until(ExpectedConditions.textToBe(
                        By.cssSelector("#q-result .error-box"), "`abc` is not a token id (0 to 2^32-1)"));
        assertThat(browser.driver.findElement(By.id("q-hint")).getText()).isEmpty();
        assertThat(browser.driver.findElement(By.id("q-link")).isDisplayed()).isFalse();
    }

    /**
     * WCAG AA in both colour schemes: every coloured text the console draws (readiness, listener badges, errors, the
     * banner, white on the accent) is at least 4.5:1 against what is behind it, computed from Chromium's styles with
     * {@code prefers-color-scheme} emulated.
     */
    @Test
    @Order(17)
    void everyColouredTextHasAaContrastInTheLightAndTheDarkScheme() {
        try {
            for (String scheme : List.of("light", "dark")) {
                browser.driver.executeCdpCommand(
                        "Emulation.setEmulatedMedia",
                        Map.of("features", List.of(Map.of("name", "prefers-color-scheme", "value", scheme))));
                var wait = browser.open(ui("#overview"));
                wait.until(d -> !d.findElements(By.cssSelector("#workers tr[data-instance]"))
                        .isEmpty());
                assertThat(browser.js("return matchMedia('(prefers-color-scheme: dark)').matches"))
                        .isEqualTo(scheme.equals("dark"));
                Object low = browser.js(CONTRAST_PROBES);
                assertThat((List<?>) low).as(scheme + ": below 4.5:1").isEmpty();
                browser.screenshot("overview-" + scheme + "-1280x800");
            }
        } finally {
            browser.driver.executeCdpCommand("Emulation.setEmulatedMedia", Map.of("features", List.of()));
        }
    }

    /**
     * Puts one element of each coloured kind where the console draws it, then returns "what ratio" for each whose
     * text is below 4.5:1 against the first opaque background behind it.
     */
    private static final String CONTRAST_PROBES = """
            const rgb = (c) => c.match(/[\\d.]+/g).map(Number);
            const lum = (c) => { const [r, g, b] = rgb(c).map((v) => { v /= 255;
              return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
            const behind = (e) => { for (; e; e = e.parentElement) { const c = getComputedStyle(e).backgroundColor;
              const p = rgb(c); if (p.length < 4 || p[3] > 0) return c; } return 'rgb(255, 255, 255)'; };
            const ratio = (e) => { const a = lum(getComputedStyle(e).color); const b = lum(behind(e));
              return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05); };
            const el = (tag, cls, text) => { const e = document.createElement(tag); e.className = cls; e.textContent = text; return e; };
            const probes = [];
            const row = document.createElement('tr');
            const listener = el('td', 'listener', '');
            for (const b of ['active', 'pending', 'paused', 'failed', 'unknown', 'disconnected', 'not-connected', 'silent',
                'exactness exact', 'exactness replaying', 'exactness degraded']) {
              const badge = el('span', 'badge ' + b, b); listener.append(badge); probes.push(['badge ' + b, badge]);
            }
            const error = el('td', 'error', 'last error'); const connect = el('td', 'error connect', 'connect error');
            const note = el('small', 'note', 'engine connection down since 12:00:00'); listener.append(note);
            probes.push(['listener note', note]);
            row.append(listener, error, connect);
            document.querySelector('#workers tbody').append(row);
            probes.push(['td.error', error], ['td.error.connect', connect]);
            const ready = document.getElementById('ready');
            for (const state of ['false', 'unreachable']) {
              ready.dataset.ready = state; probes.push(['ready ' + state, ready.querySelector('.text'), ratio(ready.querySelector('.text'))]);
            }
            probes.push(['ready reason', ready.querySelector('.reason')]);
            const banner = document.getElementById('banner'); probes.push(['banner', banner]);
            const box = el('p', 'error-box', 'error'); document.getElementById('q-result').append(box); probes.push(['error-box', box]);
            probes.push(['nav current', document.querySelector('nav a[aria-current=page]')]);
            probes.push(['button', document.querySelector('#query-form button[type=submit]')]);
            const chart = document.getElementById('chart-gaps'); chart.classList.add('alert');
            probes.push(['alerting chart value', chart.querySelector('.chart-value')]);
            probes.push(['stale note', document.querySelector('.stale-note')]);
            probes.push(['muted', document.querySelector('h3 small')]);
            probes.push(['link', document.querySelector('#indexes a')]);
            const low = probes.map(([name, e, r]) => [name, r ?? ratio(e)]).filter(([, r]) => r < 4.5)
              .map(([name, r]) => name + ' ' + r.toFixed(2));
            row.remove(); box.remove(); chart.classList.remove('alert');
            return low;
            """;

    /**
     * Every batch changes a worker's seq, and the blocks the indexes and the cache map count: the tables are updated
     * in place, so a text selected in the workers table and the keyboard focus on an index's link, or on the cache
     * map's table, are where they were after two refreshes that changed the rows around them.
     */
    @Test
    @Order(18)
    void aRefreshKeepsTheSelectionAndTheFocusInTheTables() throws Exception {
        var wait = browser.open(ui("#overview"));
        By row = By.cssSelector("#workers tr[data-instance='1']");
        String link = "#indexes tr[data-model='" + MODEL + "'][data-tenant='default'] td.links a";
        wait.until(d -> d.findElements(row).size() == 1
                && !d.findElements(By.cssSelector(link)).isEmpty());
        Object selected = browser.js(
                "const range = document.createRange(); range.selectNodeContents(document.querySelector(arguments[0]));"
                        + " getSelection().removeAllRanges(); getSelection().addRange(range);"
                        + " window.kept = document.querySelector(arguments[1]); window.kept.focus();"
                        + " return [getSelection().toString(), document.activeElement === window.kept]",
                "#workers tr[data-instance='1'] td.mono",
                link);
        assertThat(selected).isEqualTo(List.of(engine(1).endpoint(), true));
        for (int round = 0; round < 2; round++) {
            long seq = engine(1).storeSequence(freshTokens(), BLOCK).get(30, TimeUnit.SECONDS);
            wait.until(d -> Long.toString(seq).equals(d.findElement(row).getAttribute("data-last-seq")));
        }
        assertThat(browser.js("return [getSelection().toString(), document.activeElement === window.kept,"
                        + " window.kept.isConnected]"))
                .as("the selection, the focus on the index's link, the link on the page")
                .isEqualTo(List.of(engine(1).endpoint(), true, true));

        wait = browser.open(ui("#cache?model_name=" + MODEL + "&tenant_id=default"));
        By device = By.cssSelector("#worker-blocks tr[data-worker='1:0'] [data-tier=device]");
        wait.until(d -> d.findElements(device).size() == 1);
        assertThat(browser.js("window.kept = document.querySelector('#c-workers .table-wrap'); window.kept.focus();"
                        + " return document.activeElement === window.kept"))
                .isEqualTo(true);
        for (int round = 0; round < 2; round++) {
            String before = browser.driver.findElement(device).getText();
            engine(1).storeSequence(freshTokens(), BLOCK).get(30, TimeUnit.SECONDS);
            wait.until(d -> !d.findElement(device).getText().equals(before));
        }
        assertThat(browser.js("return [document.activeElement === window.kept, window.kept.isConnected]"))
                .as("the focus on the table of blocks per worker, the table on the page")
                .isEqualTo(List.of(true, true));
    }

    /**
     * A worker registered for a model no index had, while the cache map is open: its (model, tenant) is in the
     * pickers after the next refresh, without a change of view, and the index on show stays the one picked.
     */
    @Test
    @Order(19)
    void theCacheMapsPickersLearnANewIndexAtTheNextRefresh() {
        String late = "console-late-model";
        var wait = browser.open(ui("#cache?model_name=" + MODEL + "&tenant_id=default"));
        wait.until(d -> !d.findElements(By.cssSelector("#worker-blocks tr[data-worker]"))
                .isEmpty());
        assertThat(options("c-model")).doesNotContain(late);
        registerElsewhere(31, late, "t-late");
        try {
            wait.until(d -> options("c-model").contains(late));
            assertThat(new Select(browser.driver.findElement(By.id("c-model")))
                            .getFirstSelectedOption()
                            .getText())
                    .isEqualTo(MODEL);
            new Select(browser.driver.findElement(By.id("c-model"))).selectByVisibleText(late);
            wait.until(d -> options("c-tenant").equals(List.of("t-late")));
            wait.until(ExpectedConditions.textToBe(By.id("c-workers"), "No worker holds a block."));
            assertThat(browser.driver.getCurrentUrl()).endsWith("#cache?model_name=" + late + "&tenant_id=t-late");
        } finally {
            unregisterElsewhere(31, late, "t-late");
        }
    }

    /**
     * Names with numbers sort as people count: model-2 before model-10, tenant t-2 before t-10, in the pickers and
     * the indexes table.
     */
    @Test
    @Order(20)
    void modelsAndTenantsSortNaturally() {
        String two = "console-m-2";
        String ten = "console-m-10";
        registerElsewhere(41, ten, "t-10");
        registerElsewhere(42, two, "t-10");
        registerElsewhere(43, two, "t-2");
        try {
            var wait = browser.open(ui("#query"));
            wait.until(d -> options("q-model").containsAll(List.of(two, ten)));
            assertThat(options("q-model")).containsSubsequence(two, ten);
            new Select(browser.driver.findElement(By.id("q-model"))).selectByVisibleText(two);
            wait.until(d -> options("q-tenant").equals(List.of("t-2", "t-10")));

            browser.js("location.hash = '#overview'");
            By rows = By.cssSelector("#indexes tr[data-model^='console-m-']");
            wait.until(d -> d.findElements(rows).size() == 3);
            eventually(() -> assertThat(browser.driver.findElements(rows).stream()
                            .map(r -> r.getAttribute("data-model") + " " + r.getAttribute("data-tenant"))
                            .toList())
                    .containsExactly(two + " t-2", two + " t-10", ten + " t-10"));
        } finally {
            unregisterElsewhere(41, ten, "t-10");
            unregisterElsewhere(42, two, "t-10");
            unregisterElsewhere(43, two, "t-2");
        }
    }

    /**
     * Readiness in words, with the code of {@code /ready} beside them to search for: a replica waiting for its
     * minimum of workers says so, and every reason the indexer gives has its sentence.
     */
    @Test
    @Order(21)
    void readinessIsSaidInWordsWithItsCodeBeside() throws Exception {
        try (IndexerApp waiting = IndexerApp.start(IndexerConfig.defaults().with(c -> c.minInitialWorkers = 1))) {
            var wait = browser.open(ui(waiting.baseUrl(), "#overview"));
            wait.until(ExpectedConditions.textToBe(
                    By.cssSelector("#ready .text"),
                    "not ready: waiting for the minimum number of workers to register"));
            assertThat(browser.driver.findElement(By.id("ready")).getAttribute("data-ready"))
                    .isEqualTo("false");
            assertThat(visibleText(browser.driver.findElement(By.cssSelector("#ready .reason"))))
                    .isEqualTo("waiting_for_min_initial_workers");
            browser.screenshot("overview-not-ready-1280x800");
            assertFitsAPhone("overview-not-ready");
            // its 503s are the expected failed loads; read while the server is up, and leave before it stops
            assertThat(browser.severeLogs()).allMatch(m -> m.contains("/ready") && m.contains("503"));
            browser.driver.get("about:blank");
        }
        var wait = browser.open(ui("#overview"));
        wait.until(ExpectedConditions.textToBe(By.cssSelector("#ready .text"), "ready"));
        assertThat(browser.driver.findElement(By.cssSelector("#ready .reason")).isDisplayed())
                .as("no code beside a plain ready")
                .isFalse();
        assertThat(browser.js("return import('/ui/overview.js').then(m => [m.readiness('recovering_from_peer', false),"
                        + " m.readiness('shutting_down', false), m.readiness('some_later_reason', false)])"))
                .isEqualTo(List.of(
                        "not ready: loading the index from a peer or its own snapshot",
                        "shutting down: still answers queries, but asks to be taken out of rotation",
                        "not ready"));
    }

    /**
     * While the token dialog waits for the user, the rest of the page keeps refreshing: readiness and the event
     * rates (read at every refresh from /metrics) and the cache map's blocks per worker, which need no token.
     */
    @Test
    @Order(22)
    void thePageKeepsRefreshingWhileTheTokenDialogIsOpen() throws Exception {
        try (IndexerApp secured = IndexerApp.start(IndexerConfig.defaults().with(c -> c.authToken = "console-token"))) {
            registerWithToken(secured, "console-token");
            var wait = browser.open(ui(secured.baseUrl(), "#cache?model_name=" + MODEL));
            By dialog = By.id("token-dialog");
            wait.until(d -> d.findElement(dialog).getAttribute("open") != null);
            // /metrics read three times with the dialog open (the charts count the reads)
            wait.until(d -> samples(d.findElement(By.id("chart-applied"))) >= 3);
            wait.until(ExpectedConditions.textToBe(By.cssSelector("#ready .text"), "ready"));
            wait.until(ExpectedConditions.textToBe(By.id("c-workers"), "No worker holds a block."));
            assertThat(browser.driver.findElement(dialog).getAttribute("open"))
                    .as("still waiting for the token")
                    .isNotNull();

            browser.driver
                    .findElement(By.cssSelector("#token-form button[value=cancel]"))
                    .click();
            WebElement retry = wait.until(
                    ExpectedConditions.elementToBeClickable(By.cssSelector("#c-prefixes .error-box button")));
            assertThat(retry.getText()).isEqualTo("Enter token");
            assertThat(browser.severeLogs()).allMatch(m -> m.contains("/prefixes") && m.contains("401"));
            // cancelled: the cache map's next refreshes (every third round) do not send /prefixes for a 401 again
            // (the log of the one the dialog answered may come a round late: read it first)
            int cancelled = samples(browser.driver.findElement(By.id("chart-applied")));
            wait.until(d -> samples(d.findElement(By.id("chart-applied"))) >= cancelled + 1);
            assertThat(browser.severeLogs()).allMatch(m -> m.contains("/prefixes") && m.contains("401"));
            int after = samples(browser.driver.findElement(By.id("chart-applied")));
            wait.until(d -> samples(d.findElement(By.id("chart-applied"))) >= after + 7);
            assertThat(browser.severeLogs()).as("401s after the cancel").isEmpty();
            assertThat(browser.driver.findElement(By.id("c-prefixes")).getText())
                    .startsWith("401 this view needs the indexer's bearer token");
            // until the user asks: the button opens the dialog again
            browser.driver
                    .findElement(By.cssSelector("#c-prefixes .error-box button"))
                    .click();
            wait.until(d -> d.findElement(dialog).getAttribute("open") != null);
            assertThat(browser.severeLogs()).allMatch(m -> m.contains("/prefixes") && m.contains("401"));
            browser.driver.get("about:blank");
        }
    }

    /**
     * With {@code --snapshot-dir}, the Process card says how old the newest snapshot is and flags it once overdue by
     * alert KvIndexerSnapshotsOverdue's rule (older than three intervals and 5 minutes): a replica restarted on a
     * snapshot two hours old with a 30 s interval shows it overdue until its first snapshot is written (here the one a
     * registration brings a second later, not the interval's: the test need not sit out 30 s).
     */
    @Test
    @Order(23)
    void theProcessCardSaysHowOldTheNewestSnapshotIsAndWhenItIsOverdue(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        IndexerApp first = IndexerApp.start(IndexerConfig.defaults().with(c -> {
            c.snapshotDir = dir;
            c.snapshotInterval = Duration.ofHours(1);
        }));
        try (first) {
            first.snapshots().write();
        }
        List<Path> written = new SnapshotFiles(dir).newestFirst();
        assertThat(written).isNotEmpty();
        for (Path file : written) { // (the last one at shutdown, if it started its timer by then)
            Files.setLastModifiedTime(
                    file,
                    FileTime.from(Instant.now()
                            .minus(Duration.ofHours(2).plusMinutes(5).plusSeconds(30))));
        }

        try (IndexerApp restarted = IndexerApp.start(IndexerConfig.defaults().with(c -> {
            c.snapshotDir = dir;
            c.snapshotInterval = Duration.ofSeconds(30);
        }))) {
            try {
                var wait = browser.open(ui(restarted.baseUrl(), "#overview"));
                By age = By.cssSelector("#process [data-field=snapshot-age]");
                wait.until(d -> !d.findElements(age).isEmpty());
                WebElement shown = browser.driver.findElement(age);
                assertThat(shown.getText()).matches("written 2 h [56] min ago: overdue \\(one every 30 s\\)");
                assertThat(shown.getAttribute("class")).contains("overdue");
                assertThat(shown.getCssValue("font-weight")).isEqualTo("600");
                browser.js("arguments[0].scrollIntoView({block: 'center'})", shown);
                browser.screenshot("overview-process-snapshot-overdue-1280x800");

                // its first snapshot, written a second after a registration (Snapshotter.AFTER_CHANGE), is fresh
                try (HttpTestClient r = new HttpTestClient(restarted.baseUrl())) {
                    r.post(
                                    "/register",
                                    "{\"instance_id\":1,\"endpoint\":\"tcp://127.0.0.1:1\",\"model_name\":\"" + MODEL
                                            + "\",\"block_size\":" + BLOCK + "}")
                            .assertStatus(201);
                }
                new WebDriverWait(browser.driver, Duration.ofSeconds(60), Duration.ofMillis(200))
                        .ignoring(StaleElementReferenceException.class)
                        .until(d -> d.findElement(age).getText().matches("written \\d+ s ago"));
                assertThat(browser.driver.findElement(age).getAttribute("class"))
                        .doesNotContain("overdue");
                assertThat(field("snapshots")).matches("[0-9.]+ (B|KiB) newest, [0-9.]+ (MiB|GiB|TiB) free");
                assertThat(browser.js("return import('/ui/process.js').then(m => ["
                                + " m.freshness(1000, 30, true, 1390), m.freshness(1000, 30, true, 1391),"
                                + " m.freshness(1000, 3600, false, 1000 + 42), m.freshness(0, 60, false, 3 * 3600 + 60)]"
                                + ".map(f => f.text + (f.overdue ? ' !' : '')))"))
                        .as("overdue strictly past three intervals and 5 min; before the first, counted from the start")
                        .isEqualTo(List.of(
                                "written 6 min ago",
                                "written 6 min ago: overdue (one every 30 s) !",
                                "none yet, 42 s after the start",
                                "none yet, 3 h 1 min after the start: overdue (one every 1 min) !"));
            } finally {
                browser.driver.get("about:blank"); // before the replica goes: no failed loads
            }
        }
    }

    /**
     * The address's {@code ?refresh=} sets the period, in seconds within 0.25 s and an hour, and the page keeps it:
     * four more /metrics reads (the charts count them) come sooner than four of the default 2 s periods could.
     */
    @Test
    @Order(24)
    void theAddressSetsTheRefreshPeriod() {
        var wait = browser.open(ui("#overview"));
        assertThat(browser.js("return import('/ui/charts.js').then(m => ['', '?refresh=0.5', '?refresh=30',"
                        + " '?refresh=0', '?refresh=1e9', '?refresh=soon', '?refresh=', '?other=1']"
                        + ".map(q => m.refreshMs(q)))"))
                .isEqualTo(List.of(2000L, 500L, 30_000L, 250L, 3_600_000L, 2000L, 2000L, 2000L));

        By applied = By.id("chart-applied");
        wait.until(d -> samples(d.findElement(applied)) >= 1);
        int from = samples(browser.driver.findElement(applied));
        long start = System.nanoTime();
        wait.until(d -> samples(d.findElement(applied)) >= from + 4);
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .as("four refreshes at %s s each", REFRESH)
                .isLessThan(Duration.ofSeconds(8));
    }

    /**
     * A token no header can carry (here pasted with typographic quotes) is not taken: the dialog stays open and says
     * which character is wrong. It used to be stored, and then every protected request failed inside the browser
     * (fetch refuses such a header) with no answer to prompt again on, for as long as the tab lived.
     */
    @Test
    @Order(25)
    void aTokenNoHeaderCanCarryIsRefusedInTheDialog() throws Exception {
        try (IndexerApp secured = IndexerApp.start(IndexerConfig.defaults().with(c -> c.authToken = "console-token"))) {
            var wait = browser.open(ui(secured.baseUrl(), "#cache?model_name=" + MODEL));
            By dialog = By.id("token-dialog");
            By problem = By.id("token-problem");
            wait.until(d -> d.findElement(dialog).getAttribute("open") != null);
            WebElement token = browser.driver.findElement(By.id("token-input"));
            token.sendKeys("\u201cconsole-token\u201d");
            token.sendKeys(Keys.ENTER);
            wait.until(d -> d.findElement(dialog).getAttribute("open") == null
                    || d.findElement(problem).isDisplayed());
            assertThat(browser.driver.findElement(dialog).getAttribute("open"))
                    .as("the dialog, after a token with quotes")
                    .isNotNull();
            assertThat(browser.driver.findElement(problem).getText())
                    .isEqualTo("\u201c\u201c\u201d (U+201C) at character 1 cannot be sent: a bearer token is printable"
                            + " ASCII.");
            assertThat(browser.js("return sessionStorage.getItem('kv-indexer-token /')"))
                    .isNull();

            token.clear();
            token.sendKeys("console-token");
            assertThat(browser.driver.findElement(problem).isDisplayed()).isFalse();
            token.sendKeys(Keys.ENTER);
            wait.until(d -> d.findElement(dialog).getAttribute("open") == null);
            // past the token check: this replica has no index of the model
            wait.until(ExpectedConditions.textToBe(
                    By.id("c-prefixes"), "404 no indexer for model=" + MODEL + " tenant=default"));
            assertThat(browser.severeLogs())
                    .allMatch(m -> m.contains("/prefixes") && (m.contains("401") || m.contains("404")));
            browser.driver.get("about:blank");
        }
    }

    /**
     * Two indexers a proxy mounts under two prefixes of one origin share the tab's storage: each gets its own token
     * only. The console kept one token for the origin, so the first indexer's was sent to the second's protected
     * endpoints (refused there, and the dialog said the token was refused).
     */
    @Test
    @Order(26)
    void twoIndexersBehindOneOriginEachGetTheirOwnToken() throws Exception {
        try (IndexerApp a = IndexerApp.start(IndexerConfig.defaults().with(c -> c.authToken = "token-a"));
                IndexerApp b = IndexerApp.start(IndexerConfig.defaults().with(c -> c.authToken = "token-b"));
                PrefixProxy proxy = new PrefixProxy(Map.of("a", a.baseUrl(), "b", b.baseUrl()))) {
            registerWithToken(a, "token-a");
            registerWithToken(b, "token-b");
            By dialog = By.id("token-dialog");
            By prefixes = By.id("c-prefixes");
            String cache = "/ui/?refresh=" + REFRESH + "#cache?model_name=" + MODEL;

            var wait = browser.open(proxy.url() + "/a" + cache);
            enterToken(wait, "token-a");
            wait.until(ExpectedConditions.textToBe(prefixes, "No block is held yet."));

            browser.open(proxy.url() + "/b" + cache);
            wait.until(d -> d.findElement(dialog).getAttribute("open") != null);
            assertThat(browser.driver.findElement(By.id("token-why")).getText())
                    .as("asked, not told a token was refused")
                    .startsWith("This view needs the indexer's bearer token.");
            assertThat(proxy.seen())
                    .as("requests to the second indexer")
                    .filteredOn(s -> s.path().startsWith("/b/"))
                    .isNotEmpty()
                    .noneMatch(s -> "Bearer token-a".equals(s.authorization()));
            enterToken(wait, "token-b");
            wait.until(ExpectedConditions.textToBe(prefixes, "No block is held yet."));

            // the first one's token is still its own
            browser.open(proxy.url() + "/a" + cache);
            wait.until(ExpectedConditions.textToBe(prefixes, "No block is held yet."));
            assertThat(browser.driver.findElement(dialog).getAttribute("open")).isNull();
            assertThat(browser.severeLogs()).allMatch(m -> m.contains("/prefixes") && m.contains("401"));
            browser.driver.get("about:blank");
        }
    }

    /**
     * An SGLang engine with EAGLE speculative decoding stores windows of B + 1 tokens: the query box's "EAGLE windows"
     * box sends {@code "is_eagle": true} and shows its match, is kept in the address, and unticked matches nothing
     * (api.md, "POST /query").
     */
    @Test
    @Order(27)
    void theEagleBoxQueriesSglangsEagleWindows() throws Exception {
        String model = "eagle-model";
        int[] tokens = IntStream.rangeClosed(50_001, 50_013).toArray(); // 13 tokens: floor(12 / 4) = 3 windows
        String ids = Arrays.stream(tokens).mapToObj(Integer::toString).collect(Collectors.joining(","));
        try (EngineSimulator sglang = EngineSimulator.start(EngineSimulator.Options.builder()
                .format(io.kvindexer.indexer.sim.EngineEventEncoder.Format.SGLANG7)
                .hashMode(io.kvindexer.indexer.sim.EngineEventEncoder.HashMode.I64)
                .build())) {
            http.post(
                            "/register",
                            "{\"instance_id\":60,\"endpoint\":\"" + sglang.endpoint() + "\",\"model_name\":\"" + model
                                    + "\",\"block_size\":" + BLOCK + "}")
                    .assertStatus(201);
            await().atMost(Browser.WAIT).until(() -> sglang.subscriptions() >= 1);
            sglang.storeEagleSequence(tokens, BLOCK, "GPU").get(30, TimeUnit.SECONDS);
            String eagle = "{\"model_name\":\"" + model + "\",\"is_eagle\":true,\"token_ids\":[" + ids + "]}";
            await().atMost(Browser.WAIT)
                    .until(() -> http.post("/query", eagle)
                                    .json()
                                    .path("instances")
                                    .path("60")
                                    .path("longest_matched")
                                    .asInt()
                            == 3 * BLOCK);

            var wait = browser.open(ui("#query?model_name=" + model));
            wait.until(d -> model.equals(new Select(d.findElement(By.id("q-model")))
                    .getFirstSelectedOption()
                    .getText()));
            WebElement input = browser.driver.findElement(By.id("q-input"));
            input.clear();
            input.sendKeys(ids.replace(",", ", "));
            WebElement box = browser.driver.findElement(By.id("q-eagle"));
            assertThat(box.isSelected()).isFalse();
            assertThat(box.findElement(By.xpath("..")).getText()).isEqualTo("EAGLE windows (SGLang)");
            box.sendKeys(Keys.SPACE); // the keyboard ticks it
            assertThat(box.isSelected()).isTrue();
            browser.driver
                    .findElement(By.cssSelector("#query-form button[type=submit]"))
                    .click();
            By card = By.cssSelector(
                    "#q-result .instance[data-instance='60'] .bar-row[data-field=longest_matched]" + " .bar-value");
            wait.until(ExpectedConditions.textToBe(card, Integer.toString(3 * BLOCK)));
            assertThat(browser.driver.findElements(By.cssSelector("#q-result .instance")))
                    .hasSize(1);
            assertThat(browser.driver.findElements(By.cssSelector("#q-result [data-field=exact]")))
                    .as("an exact instance's card has no 'not exact' note")
                    .isEmpty();
            assertThat(browser.driver.findElement(By.id("q-hint")).getText())
                    .isEqualTo("13 tokens = 3 EAGLE windows of " + BLOCK + " + 1");
            String url = browser.driver.getCurrentUrl();
            assertThat(url).endsWith("&token_ids=" + ids + "&is_eagle=true");

            // the address alone ticks the box and runs the EAGLE query
            wait = browser.open(url);
            wait.until(ExpectedConditions.textToBe(card, Integer.toString(3 * BLOCK)));
            assertThat(browser.driver.findElement(By.id("q-eagle")).isSelected())
                    .isTrue();

            // unticked: Dynamo's plain blocks, which an EAGLE engine never stored
            browser.driver.findElement(By.id("q-eagle")).click();
            browser.driver
                    .findElement(By.cssSelector("#query-form button[type=submit]"))
                    .click();
            wait.until(ExpectedConditions.attributeToBe(By.cssSelector("#q-result > *"), "data-matched", "0"));
            assertThat(browser.driver.getCurrentUrl()).doesNotContain("is_eagle");
            assertThat(browser.driver.findElement(By.id("q-hint")).getText())
                    .isEqualTo("13 tokens = 3 full blocks of " + BLOCK);

            // block hashes are already cut: the box does not apply to them
            browser.driver
                    .findElement(By.cssSelector("input[name=kind][value=block_hashes]"))
                    .click();
            assertThat(browser.driver.findElement(By.id("q-eagle")).isEnabled()).isFalse();
            http.post("/unregister", "{\"instance_id\":60,\"model_name\":\"" + model + "\"}")
                    .assertStatus(200);
        }
    }

    /**
     * A replica loading its state from a peer has no index and no worker yet: its tables say it is loading, not
     * "register a worker", which would send whoever debugs it to register the fleet again.
     */
    @Test
    @Order(28)
    void aRecoveringReplicasEmptyTablesSayItIsLoading() throws Exception {
        // an unreachable peer ends recovery at once: the pre-delay keeps the replica recovering meanwhile
        try (IndexerApp recovering = IndexerApp.start(IndexerConfig.defaults().with(c -> {
            c.peers = List.of("http://127.0.0.1:9");
            c.recoveryDelay = Duration.ofMinutes(2);
        }))) {
            var wait = browser.open(ui(recovering.baseUrl(), "#overview"));
            wait.until(ExpectedConditions.textToBe(By.cssSelector("#ready .reason"), "recovering_from_peer"));
            String loading = "None yet: this replica is still loading its state from a peer or its snapshot"
                    + " (recovering_from_peer).";
            wait.until(ExpectedConditions.textToBe(By.cssSelector("#indexes tbody td.empty"), loading));
            wait.until(ExpectedConditions.textToBe(By.cssSelector("#workers tbody td.empty"), loading));
            assertThat(browser.severeLogs()).allMatch(m -> m.contains("/ready") && m.contains("503"));
            browser.driver.get("about:blank");
        }
    }

    /**
     * The keyboard's "Skip to content" on the Query view moves the focus into the view and keeps it: it followed
     * {@code #main}, an address that names no view, and so landed on the Overview without the query.
     */
    @Test
    @Order(29)
    void skipToContentKeepsTheViewAndItsQuery() {
        String query = "#query?model_name=" + MODEL + "&tenant_id=default&token_ids=" + QUERY_IDS;
        browser.open(ui(query));
        assertShowsCards(queryJson());
        new Actions(browser.driver).sendKeys(Keys.TAB).perform();
        assertThat(browser.driver.switchTo().activeElement().getText()).isEqualTo("Skip to content");
        new Actions(browser.driver).sendKeys(Keys.ENTER).perform();
        browser.waiting().until(d -> "main".equals(d.switchTo().activeElement().getAttribute("id")));
        assertThat(browser.driver.getCurrentUrl()).endsWith(query);
        assertThat(browser.driver.findElement(By.id("view-query")).isDisplayed())
                .isTrue();
        assertThat(browser.driver.findElements(By.cssSelector("#q-result .instance")))
                .isNotEmpty();
        new Actions(browser.driver).sendKeys(Keys.TAB).perform();
        assertThat(browser.driver.switchTo().activeElement().getAttribute("id")).isEqualTo("q-model");
    }

    /** At a phone's width every bar's label fits beside its bar: "longest_matched" ran under it, cut. */
    @Test
    @Order(30)
    void theQueryBarsLabelsFitBesideTheirBarsOnAPhone() {
        browser.open(ui("#query?model_name=" + MODEL + "&tenant_id=default&token_ids=" + QUERY_IDS));
        assertShowsCards(queryJson());
        browser.size(390, 844);
        try {
            assertThat(browser.js("return [...document.querySelectorAll('#q-result .bar-label')]"
                            + ".filter(e => e.scrollWidth > e.clientWidth).map(e => e.textContent)"))
                    .as("labels wider than their column")
                    .isEqualTo(List.of());
        } finally {
            browser.size(1280, 800);
        }
    }

    /** A worker of {@link #MODEL} on {@code app}, where nothing listens: an index whose prefixes need the token. */
    private static void registerWithToken(IndexerApp app, String token) {
        try (HttpTestClient client = new HttpTestClient(app.baseUrl())) {
            client.request(
                            "POST",
                            "/register",
                            "application/json",
                            ("{\"instance_id\":7,\"endpoint\":\"tcp://127.0.0.1:1\",\"model_name\":\"" + MODEL
                                            + "\",\"block_size\":" + BLOCK + "}")
                                    .getBytes(java.nio.charset.StandardCharsets.UTF_8),
                            "Authorization",
                            "Bearer " + token)
                    .assertStatus(201);
        }
    }

    /** Types {@code token} into the token dialog once it opens, and waits for it to close. */
    private static void enterToken(WebDriverWait wait, String token) {
        By dialog = By.id("token-dialog");
        wait.until(d -> d.findElement(dialog).getAttribute("open") != null);
        WebElement input = browser.driver.findElement(By.id("token-input"));
        input.sendKeys(token);
        input.sendKeys(Keys.ENTER);
        wait.until(d -> d.findElement(dialog).getAttribute("open") == null);
    }

    /** Two blocks' worth of token ids no engine has stored yet. */
    private static int[] freshTokens() {
        int first = nextToken;
        nextToken += 2 * BLOCK;
        return IntStream.range(first, nextToken).toArray();
    }

    /**
     * One card per instance of the JSON's answer: for the tests that run after earlier ones changed the fixture
     * (engine 2 is gone by then), where {@link #assertShowsQueryJson}'s fixture numbers no longer hold.
     */
    private static void assertShowsCards(JsonNode expected) {
        List<String> ids = new ArrayList<>();
        expected.get("instances").fieldNames().forEachRemaining(ids::add);
        assertThat(ids).isNotEmpty();
        browser.waiting()
                .until(d -> d.findElements(By.cssSelector("#q-result .instance")).stream()
                        .map(e -> e.getAttribute("data-instance"))
                        .sorted()
                        .toList()
                        .equals(ids.stream().sorted().toList()));
    }

    /** A worker of {@link #MODEL} for another tenant, registered where nothing listens (its engine is not up). */
    private static void registerElsewhere(int instance, String tenant) {
        registerElsewhere(instance, MODEL, tenant);
    }

    /** A worker of any model and tenant, registered where nothing listens (its engine is not up). */
    private static void registerElsewhere(int instance, String model, String tenant) {
        http.post(
                        "/register",
                        "{\"instance_id\":" + instance + ",\"endpoint\":\"tcp://127.0.0.1:1\",\"model_name\":\"" + model
                                + "\",\"tenant_id\":\"" + tenant + "\",\"block_size\":" + BLOCK + "}")
                .assertStatus(201);
    }

    private static void unregisterElsewhere(int instance, String tenant) {
        unregisterElsewhere(instance, MODEL, tenant);
    }

    private static void unregisterElsewhere(int instance, String model, String tenant) {
        http.post(
                        "/unregister",
                        "{\"instance_id\":" + instance + ",\"model_name\":\"" + model + "\",\"tenant_id\":\"" + tenant
                                + "\"}")
                .assertStatus(200);
    }

    /** The texts of a select's options, in their order. */
    private static List<String> options(String selectId) {
        return new Select(browser.driver.findElement(By.id(selectId)))
                .getOptions().stream().map(WebElement::getText).toList();
    }

    /** An element's text, which is on the page for all to see: displayed, and not squeezed into a screen-reader box. */
    private static String visibleText(WebElement e) {
        assertThat(e.isDisplayed()).as("displayed").isTrue();
        assertThat(e.getSize().getWidth()).as("width in px").isGreaterThan(20);
        String text = e.getText();
        assertThat(text).isNotBlank();
        return text;
    }

    /** The instant of the {@code <time>} in an element, from its datetime attribute. */
    private static long epochMillis(WebElement e) {
        return java.time.Instant.parse(e.findElement(By.tagName("time")).getAttribute("datetime"))
                .toEpochMilli();
    }

    /** The effective opacity of an element: its own times its ancestors'. */
    private static double opacity(String selector) {
        return ((Number) browser.js(
                        "let o = 1; for (let e = document.querySelector(arguments[0]); e; e = e.parentElement)"
                                + " o *= Number(getComputedStyle(e).opacity); return o;",
                        selector))
                .doubleValue();
    }

    private static String field(String name) {
        return browser.driver
                .findElement(By.cssSelector("#process [data-field=" + name + "]"))
                .getText();
    }
}

package io.kvindexer.indexer.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;

/**
 * The console with the names a platform registers: the empty model name (Dynamo takes it) is an index like any
 * other in the cache map, and a name of 256 characters without a space wraps instead of pushing the other columns
 * (and the pickers) out of view.
 */
class ConsoleNamesBrowserTest {

    private static final String LONG = "org/" + "x".repeat(252);

    private static void register(HttpTestClient http, long id, String endpoint, String model, String tenant) {
        http.post(
                        "/register",
                        JsonNodeFactory.instance
                                .objectNode()
                                .put("instance_id", id)
                                .put("endpoint", endpoint)
                                .put("model_name", model)
                                .put("tenant_id", tenant)
                                .put("block_size", 4)
                                .toString())
                .assertOk(201);
    }

    @Test
    void emptyAndLongNamesAreShownAndPickable() throws Exception {
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient http = new HttpTestClient(app.baseUrl());
                EngineSimulator engine = EngineSimulator.start(EngineSimulator.Options.defaults());
                Browser browser = new Browser()) {
            register(http, 1, engine.endpoint(), "", "");
            register(http, 2, "tcp://127.0.0.1:1", LONG, "tenant-" + "y".repeat(249));
            await().atMost(Browser.WAIT).until(() -> engine.subscriptions() >= 1);
            engine.storeSequence(IntStream.rangeClosed(1, 8).toArray(), 4).get(30, TimeUnit.SECONDS);
            await().atMost(Browser.WAIT)
                    .until(() -> http.get("/stats?model_name=&tenant_id=")
                                    .json()
                                    .at("/indexes/0/blocks")
                                    .asInt()
                            == 2);

            browser.open(app.baseUrl() + "/ui/#cache?model_name=&tenant_id=")
                    .until(d -> !d.findElements(By.cssSelector("#worker-blocks tr[data-worker='1:0']"))
                            .isEmpty());
            assertThat(browser.driver.findElement(By.id("c-workers")).getText()).doesNotContain("No index yet");
            assertFitsTheWindow(browser, "#c-model");

            browser.open(app.baseUrl() + "/ui/#overview")
                    .until(d ->
                            d.findElements(By.cssSelector("#indexes tbody tr")).size() == 2);
            // the links column, last of the table, is in view without scrolling the table sideways
            assertThat(browser.js("const wrap = document.querySelector('#indexes').parentElement;"
                            + " return wrap.scrollWidth - wrap.clientWidth"))
                    .as("the index table's sideways overflow in px")
                    .isEqualTo(0L);
            assertThat(browser.js("const wrap = document.querySelector('#workers').parentElement;"
                            + " return wrap.scrollWidth - wrap.clientWidth"))
                    .as("the worker table's sideways overflow in px")
                    .isEqualTo(0L);
            browser.screenshot("long-names-1280x800");
            assertThat(browser.severeLogs()).as("browser console errors").isEmpty();
        }
    }

    private static void assertFitsTheWindow(Browser browser, String selector) {
        Number right = (Number) browser.js(
                "return document.querySelector(arguments[0]).getBoundingClientRect().right"
                        + " - document.documentElement.clientWidth",
                selector);
        assertThat(right.intValue())
                .as("%s past the window's right edge, px", selector)
                .isLessThanOrEqualTo(0);
    }
}

package io.floe.app.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.app.config.FloeConfig;
import io.floe.app.service.FloeService;
import io.floe.testing.IcebergFixture;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.Keys;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The web UI in a real headless browser (Debian's chromium and chromedriver), against a running
 * Floe. Skips itself only when no browser is installed; {@code .ci/run} installs one.
 */
class WebUiIT {

  private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");

  private static final ViewDefinition MINUTE_VOLUME =
      FloeHarness.view(
          "minute_volume",
          "SELECT symbol, date_trunc('minute', ts) AS minute_ts, sum(quantity) AS volume"
              + " FROM lake.market.trades GROUP BY 1, 2");
  private static final String HOURLY_QUERY =
      "SELECT symbol, date_trunc('hour', ts) AS hour_ts, sum(quantity) AS volume"
          + " FROM lake.market.trades GROUP BY 1, 2";

  @TempDir Path dir;
  private FloeHarness floe;
  private IcebergFixture lake;
  private Table trades;
  private FloeService service;
  private WebDriver browser;

  @BeforeEach
  void setUp() throws Exception {
    // Skipped, not passed, without a browser: the reports and .ci/run name what is missing.
    Assumptions.assumeTrue(
        Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER),
        () ->
            "no headless browser: "
                + (Files.isExecutable(CHROMIUM) ? "" : CHROMIUM + " ")
                + (Files.isExecutable(CHROMEDRIVER) ? "" : CHROMEDRIVER + " ")
                + "missing (apt-get install chromium chromium-driver, as .ci/run does)");
    floe = new FloeHarness(dir);
    lake = floe.lake();
    trades = lake.createTrades("market", "trades");
    lake.append(
        trades,
        List.of(
            lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B"),
            lake.trade("MSFT", "2026-04-08T10:00:40Z", 99.0, 7L, "B")));
    browser = startBrowser();
  }

  /** Starts Floe, on loopback, with {@code settings}, and defines the test's view. */
  private void startFloe(Map<String, String> settings) throws Exception {
    service = floe.start("a", settings);
    floe.define(MINUTE_VOLUME);
  }

  @AfterEach
  void tearDown() throws Exception {
    if (browser != null) {
      browser.quit();
    }
    if (floe != null) {
      floe.close();
    }
  }

  private static WebDriver startBrowser() {
    ChromeOptions options = new ChromeOptions();
    options.setBinary(CHROMIUM.toFile());
    options.addArguments(
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-extensions",
        "--window-size=1280,1000");
    ChromeDriverService driver =
        new ChromeDriverService.Builder()
            .usingDriverExecutable(CHROMEDRIVER.toFile())
            .usingAnyFreePort()
            .build();
    return new ChromeDriver(driver, options);
  }

  private String url() {
    return "http://127.0.0.1:" + service.httpPort() + "/";
  }

  private WebElement card(String view) {
    return browser.findElement(By.cssSelector("[data-testid=view-card][data-view='" + view + "']"));
  }

  private WebDriverWait waitUpTo(int seconds) {
    WebDriverWait wait = new WebDriverWait(browser, Duration.ofSeconds(seconds));
    wait.ignoring(org.openqa.selenium.NoSuchElementException.class);
    wait.ignoring(org.openqa.selenium.StaleElementReferenceException.class);
    wait.withMessage(() -> "the page shows:\n" + browser.findElement(By.tagName("body")).getText());
    return wait;
  }

  @Test
  void shouldShowEveryViewWithItsRefreshesAndLag() throws Exception {
    startFloe(Map.of());
    browser.get(url());

    waitUpTo(60)
        .until(
            b ->
                b.findElement(By.cssSelector("[data-testid=health]")).getText().equals("ready")
                    && card("minute_volume")
                        .findElement(By.cssSelector("[data-testid=last-refresh]"))
                        .getText()
                        .startsWith("full"));
    WebElement card = card("minute_volume");
    assertThat(card.findElement(By.cssSelector("[data-testid=view-status]")).getText())
        .isEqualToIgnoringCase("idle");
    // All 64 bits of the snapshot id: as a JSON number a browser would round it to 53.
    assertThat(card.findElement(By.cssSelector("[data-testid=source-snapshot]")).getText())
        .isEqualTo(String.valueOf(trades.currentSnapshot().snapshotId()));
    assertThat(card.getText()).contains("lake.market.trades → lake.analytics.minute_volume");
    assertThat(card.findElement(By.cssSelector("[data-testid=last-refresh]")).getText())
        .contains("2 rows");
    assertThat(card.findElement(By.cssSelector("[data-testid=lag-chart]")).isDisplayed()).isTrue();

    // A new commit shows up as an incremental refresh, with its lag charted.
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:01:05Z", 11.0, 3L, "S")));
    floe.announce("lake.market.trades");
    waitUpTo(60)
        .until(
            b ->
                card("minute_volume")
                    .findElement(By.cssSelector("[data-testid=last-refresh]"))
                    .getText()
                    .startsWith("incremental"));
    assertThat(
            card("minute_volume")
                .findElements(By.cssSelector("[data-testid=lag-chart] polyline"))
                .size())
        .isEqualTo(1);
    // The view's staleness objective (Floe's default, 5 minutes) is drawn across the lag chart.
    assertThat(
            card("minute_volume")
                .findElements(
                    By.cssSelector("[data-testid=lag-chart] [data-testid=lag-objective]")))
        .hasSize(1);
    assertThat(
            card("minute_volume").findElement(By.cssSelector("[data-testid=staleness]")).getText())
        .endsWith("(objective 300 s)");
    assertThat(
            card("minute_volume")
                .findElement(By.cssSelector("[data-testid=recent-refreshes]"))
                .findElements(By.tagName("li")))
        .hasSize(2);
  }

  @Test
  void shouldRefreshATimeRangeFromTheCardAndShowWhyARangeIsRefused() throws Exception {
    // Given
    startFloe(Map.of());
    browser.get(url());
    waitUpTo(60)
        .until(
            b ->
                card("minute_volume")
                    .findElement(By.cssSelector("[data-testid=last-refresh]"))
                    .getText()
                    .startsWith("full"));

    // When a range that ends before it starts is asked for
    card("minute_volume")
        .findElement(By.cssSelector("[data-testid=range-from]"))
        .sendKeys("2026-04-09");
    card("minute_volume")
        .findElement(By.cssSelector("[data-testid=range-to]"))
        .sendKeys("2026-04-08");
    card("minute_volume").findElement(By.cssSelector("[data-testid=refresh-range]")).click();

    // Then the toast says why
    waitUpTo(10)
        .until(
            b ->
                b.findElement(By.cssSelector("[data-testid=toast]"))
                    .getText()
                    .contains("is empty: from must be before to"));

    // When the day is asked for
    WebElement from = card("minute_volume").findElement(By.cssSelector("[data-testid=range-from]"));
    from.clear();
    from.sendKeys("2026-04-08");
    WebElement to = card("minute_volume").findElement(By.cssSelector("[data-testid=range-to]"));
    to.clear();
    to.sendKeys("2026-04-09");
    card("minute_volume").findElement(By.cssSelector("[data-testid=refresh-range]")).click();

    // Then it is refreshed as a range
    waitUpTo(10)
        .until(
            b ->
                b.findElement(By.cssSelector("[data-testid=toast]"))
                    .getText()
                    .equals("Refresh of minute_volume from 2026-04-08 to 2026-04-09 requested"));
    floe.awaitEvent("minute_volume", e -> "range".equals(e.getScope()));
    floe.awaitOracle(MINUTE_VOLUME, trades);
  }

  @Test
  void shouldCatchUpWithAnUnannouncedCommitFromTheRefreshButton() throws Exception {
    startFloe(Map.of());
    browser.get(url());
    waitUpTo(60)
        .until(
            b ->
                card("minute_volume")
                    .findElement(By.cssSelector("[data-testid=last-refresh]"))
                    .getText()
                    .startsWith("full"));
    // A commit whose notice never reaches Floe: only a refresh request can bring it in.
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:01:05Z", 11.0, 3L, "S")));

    card("minute_volume").findElement(By.cssSelector("[data-testid=refresh]")).click();

    waitUpTo(10)
        .until(
            b ->
                b.findElement(By.cssSelector("[data-testid=toast]"))
                    .getText()
                    .equals("Refresh of minute_volume requested"));
    waitUpTo(60)
        .until(
            b ->
                card("minute_volume")
                        .findElements(By.cssSelector("[data-testid=recent-refreshes] li"))
                        .size()
                    == 2);
    floe.awaitOracle(MINUTE_VOLUME, trades);
  }

  @Test
  void shouldValidateAsYouTypeAndCreateAView() throws Exception {
    startFloe(Map.of());
    browser.get(url());
    waitUpTo(60).until(b -> !b.findElements(By.cssSelector("[data-testid=view-card]")).isEmpty());

    browser.findElement(By.cssSelector("[data-testid=new-view]")).click();
    WebElement query = browser.findElement(By.cssSelector("[data-testid=field-query]"));
    query.sendKeys(
        "SELECT symbol, date_trunc('hour', ts) AS hour_ts, sum(quantityy) AS volume"
            + " FROM lake.market.trades GROUP BY 1, 2");
    WebElement validation = browser.findElement(By.cssSelector("[data-testid=validation]"));
    waitUpTo(10).until(b -> validation.getAttribute("class").contains("bad"));
    assertThat(validation.getText()).contains("line 1").contains("quantityy");

    query.clear();
    query.sendKeys(HOURLY_QUERY);
    waitUpTo(10).until(b -> validation.getAttribute("class").contains("ok"));
    assertThat(validation.getText())
        .contains("bucket date_trunc('hour', ts) AS hour_ts")
        .contains("appends folded in (delta path)");

    browser.findElement(By.cssSelector("[data-testid=field-name]")).sendKeys("hourly_volume");
    browser
        .findElement(By.cssSelector("[data-testid=field-target]"))
        .sendKeys("lake.analytics.hourly_volume");
    browser.findElement(By.cssSelector("[data-testid=save]")).click();

    waitUpTo(60)
        .until(
            b ->
                card("hourly_volume")
                    .findElement(By.cssSelector("[data-testid=last-refresh]"))
                    .getText()
                    .startsWith("full"));
    floe.awaitOracle(FloeHarness.view("hourly_volume", HOURLY_QUERY), trades);
  }

  @Test
  void shouldShowViewsWithoutTheTokenAndChangeThemOnceItIsEntered() throws Exception {
    startFloe(Map.of(FloeConfig.HTTP_TOKEN, "ui-t0ken"));
    browser.get(url());
    waitUpTo(60)
        .until(
            b ->
                card("minute_volume")
                    .findElement(By.cssSelector("[data-testid=last-refresh]"))
                    .getText()
                    .startsWith("full"));

    // Read-only without the token: the list shows, a change asks for the token.
    card("minute_volume").findElement(By.cssSelector("[data-testid=refresh]")).click();
    waitUpTo(10)
        .until(
            b ->
                b.findElement(By.cssSelector("[data-testid=toast]"))
                    .getText()
                    .contains("needs its API token"));
    assertThat(browser.findElement(By.cssSelector("[data-testid=token]")).getAttribute("class"))
        .contains("needed");

    browser.findElement(By.cssSelector("[data-testid=token]")).sendKeys("ui-t0ken", Keys.TAB);
    waitUpTo(30)
        .until(
            b ->
                !card("minute_volume")
                    .findElements(By.cssSelector("[data-testid=recent-refreshes] li"))
                    .isEmpty());
    card("minute_volume").findElement(By.cssSelector("[data-testid=refresh]")).click();
    waitUpTo(10)
        .until(
            b ->
                b.findElement(By.cssSelector("[data-testid=toast]"))
                    .getText()
                    .equals("Refresh of minute_volume requested"));
    JavascriptExecutor js = (JavascriptExecutor) browser;
    assertThat(js.executeScript("return sessionStorage.getItem('floe.token')"))
        .isEqualTo("ui-t0ken");
    assertThat(js.executeScript("return localStorage.getItem('floe.token')")).isNull();
  }
}

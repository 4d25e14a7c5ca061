// Opens a page of mxprof report --html in headless Chromium (through
// playwright-core) and prints what a reader would see, as one JSON object:
//   errors    console errors, page errors and requests off the disk
//   hints     the lines that say which setting gives a missing part
//   bars      the step numbers of the step bars, in order
//   slow      the step numbers of the bars marked slowest
//   slowest   the step whose breakdown shows after a click on the bar
//             of the longest step, and its first row's name (top)
//   flame_ms  the flame graph's root total, tables_ms the tables' self
//             total, as the page computes them; host_rows the rows summed
//   hl        frames highlighted by a search for SEARCH, and how many of
//             them do not contain it (hl_wrong)
// usage: node html_check.js PAGE SCREENSHOT SEARCH
// (NODE_PATH names the folder that holds playwright-core; CHROMIUM the
// browser.)
const { chromium } = require("playwright-core");

(async () => {
  const [page_path, shot, term] = process.argv.slice(2);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox"],
  });
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  const errors = [];
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("request", (r) => {
    if (!r.url().startsWith("file:")) errors.push("network: " + r.url());
  });
  await page.goto("file://" + page_path);
  const out = { errors };
  out.bars = await page.$$eval("rect.step", (r) => r.map((e) => +e.dataset.step));
  out.slow = await page.$$eval("rect.step.slow", (r) => r.map((e) => +e.dataset.step));
  const longest = await page.$$eval("rect.step", (r) => {
    let best = 0;
    r.forEach((e, i) => { if (+e.dataset.dur > +r[best].dataset.dur) best = i; });
    return best;
  });
  out.hints = await page.$$eval("p.hint", (p) => p.map((e) => e.textContent));
  if (out.bars.length) {
    await page.locator("rect.step").nth(longest).click();
    out.slowest = await page.$eval("#breakdown h3", (e) => e.textContent);
    out.top = await page.$eval("#breakdown td.mono", (e) => e.textContent);
  }
  out.tables_ms = +(await page.getAttribute("#tables-self-total", "data-ms"));
  if (!(await page.$("#flame-total"))) {
    await page.screenshot({ path: shot, fullPage: true });
    await browser.close();
    console.log(JSON.stringify(out));
    return;
  }
  out.flame_ms = +(await page.getAttribute("#flame-total", "data-ms"));
  out.host_rows = await page.evaluate(() => {
    let n = 0;
    for (const g of D.flameGroups) n += Object.keys((D.tables.Time || {})[g] || {}).length;
    return n;
  });
  await page.fill("#flame-search", term);
  out.hl = await page.$$eval("#flame div.hl", (d) => d.length);
  out.hl_wrong = await page.$$eval("#flame div.hl", (d, t) =>
    d.filter((e) => !e.title.includes(t)).length, term);
  await page.screenshot({ path: shot, fullPage: true });
  await browser.close();
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(String(e)); process.exit(1); });

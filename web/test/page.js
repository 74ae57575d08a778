// Drives Debian's chromium (puppeteer-core) against a running `gpuscope serve`.
//   node page.js check CONFIG_JSON       the page test (tests/integration/test_web_page.py)
//   node page.js screenshot CONFIG_JSON  the README screenshot (make screenshot)
//   node page.js bench CONFIG_JSON       page weight and time to first draw (bench/web_bench.py)
//   node page.js jobs CONFIG_JSON        the Jobs tab (tests/integration/test_web_jobs.py)
// CONFIG_JSON: {"url", "user", "password", "control", "artifacts", "out", "chromium"}.
// Prints one JSON line with the results; exits 1 with a message on a failed check.
"use strict";
const fs = require("fs");
const path = require("path");
const puppeteer = require("puppeteer-core");

const cfg = JSON.parse(process.argv[3] || "{}");
const mode = process.argv[2];
const auth = cfg.user ? { username: cfg.user, password: cfg.password } : null;

function check(cond, message) {
  if (!cond) throw new Error(message);
}

// Polls fn until it returns something truthy. An element that is not there
// yet ($eval throws) is waited for like a false value; the last such error is
// reported if the time runs out.
async function waitFor(what, fn, timeoutMs = 30000) {
  const deadline = Date.now() + timeoutMs;
  let last = null;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error("timed out waiting for " + what + (last ? " (" + last.message + ")" : ""));
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function api(pathname, withAuth = true) {
  const headers = {};
  if (withAuth && auth) {
    headers.Authorization = "Basic " + Buffer.from(auth.username + ":" + auth.password)
      .toString("base64");
  }
  const r = await fetch(cfg.url + pathname, { headers });
  return { status: r.status, body: await r.text() };
}

// Appends a control command and waits for the simulator's acknowledgement.
async function control(line) {
  fs.appendFileSync(cfg.control, line + "\n");
  const size = fs.statSync(cfg.control).size;
  await waitFor("the simulator to apply " + line, () => {
    try {
      return Number(fs.readFileSync(cfg.control + ".ack", "utf8").trim()) >= size;
    } catch (e) {
      return false;
    }
  }, 10000);
}

async function launch() {
  return puppeteer.launch({
    executablePath: cfg.chromium || "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"],
    defaultViewport: { width: 1400, height: 1000, deviceScaleFactor: 1 },
  });
}

async function openPage(browser) {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  if (auth) await page.authenticate(auth);
  return { page, errors };
}

const cycles = (page) => page.evaluate(() => window.gpuscopePage.cycles);

async function shot(page, name) {
  fs.mkdirSync(cfg.artifacts, { recursive: true });
  const file = path.join(cfg.artifacts, name + ".png");
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

async function checkAuth(browser) {
  check((await api("/api/v1/gpus", false)).status === 401, "/api/v1/gpus without credentials");
  check((await api("/ui/app.js", false)).status === 401, "/ui/app.js without credentials");
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  // Chromium without credentials either shows the 401 or gives up on the
  // challenge (ERR_INVALID_AUTH_CREDENTIALS); either way no page loads.
  let status = null;
  try {
    status = (await page.goto(cfg.url + "/", { waitUntil: "load" })).status();
  } catch (e) {
    check(/ERR_INVALID_AUTH_CREDENTIALS/.test(e.message), "loading without credentials: " + e);
  }
  check(status === null || status === 401, "the page without credentials answered " + status);
  check(!(await page.$(".card")), "cards shown without credentials");
  await context.close();
}

async function checkCards(page, gpus) {
  const devices = gpus.devices;
  const keys = devices.map((d) => (d.mig ? d.gpu + "." + d.mig.gpu_instance_id : String(d.gpu)));
  await waitFor("a card per device", async () =>
    (await page.$$eval(".card", (cs) => cs.map((c) => c.dataset.gpu))).join() === keys.join());
  for (const d of devices) {
    const key = d.mig ? d.gpu + "." + d.mig.gpu_instance_id : String(d.gpu);
    const text = await page.$eval(`.card[data-gpu="${key}"]`, (c) => c.innerText);
    check(text.includes(d.name), `card ${key} lacks its model: ${text}`);
    check(/\d+ %/.test(text) && /GiB/.test(text) && / W/.test(text), `card ${key}: ${text}`);
  }
  const mig = devices.filter((d) => d.mig);
  for (const d of mig) {
    const text = await page.$eval(`.card[data-gpu="${d.gpu}.${d.mig.gpu_instance_id}"]`,
                                  (c) => c.innerText);
    check(text.includes("MIG " + d.mig.profile), "MIG card lacks its profile: " + text);
  }
  return { cards: keys.length, mig: mig.map((d) => d.mig.profile) };
}

async function checkLost(page, gpu) {
  const before = await cycles(page);
  await control(`inject ${gpu} lost`);
  const injected = await cycles(page);
  await waitFor(`GPU ${gpu} shown lost`, () =>
    page.$eval(`.card[data-gpu="${gpu}"]`, (c) => c.dataset.state === "lost"), 20000);
  const shown = await cycles(page);
  const text = await page.$eval(`.card[data-gpu="${gpu}"] .state`, (e) => e.textContent);
  check(text === "lost", "lost card pill reads " + text);
  check(shown - injected <= 2, `lost GPU shown after ${shown - injected} page cycles (max 2)`);
  return { before, injected, shown, page_cycles: shown - injected };
}

async function checkThermal(page, key) {
  await page.evaluate((k) => { location.hash = "gpu=" + k; }, key);
  await waitFor("the thermal finding of GPU " + key, () =>
    page.$(`#detail .finding[data-kind="thermal_throttle"]`), 90000);
  const text = await page.$eval("#detail .diagnosis", (e) => e.innerText);
  check(/thermal throttle/.test(text) && /Action:/.test(text), "thermal finding text: " + text);
  const clocks = await page.evaluate((k) => window.gpuscopePage.series(k, "sm_clock"), key);
  const values = clocks.filter((v) => v != null);
  const max = Math.max(...values), last = values[values.length - 1];
  check(values.length > 10 && last < 0.97 * max,
        `the SM clock of GPU ${key} does not fall: max ${max}, last ${last}`);
  const charts = await page.$$eval("#detail .chart canvas", (cs) => cs.length);
  check(charts >= 5, "detail charts drawn: " + charts);
  return { clock_max_mhz: max, clock_last_mhz: last };
}

// A memory leak injected at the start: by the time the diagnosis has a window
// its trend predicts the time to out-of-memory, on the card and over the chart.
async function checkOom(page, gpu) {
  await waitFor(`GPU ${gpu}'s OOM prediction on its card`, () =>
    page.$eval(`.card[data-gpu="${gpu}"] .bneck`, (e) => /OOM in/.test(e.textContent)), 30000);
  await page.evaluate((k) => { location.hash = "gpu=" + k; }, String(gpu));
  const title = await waitFor("the memory chart's OOM title", () =>
    page.$eval('#detail [data-chart="memory"] h3', (e) =>
      (/out of memory in/.test(e.textContent) ? e.textContent : null)), 10000);
  return { title, screenshot: await shot(page, "web-oom-gpu" + gpu) };
}

async function checkTabs(page) {
  await page.evaluate(() => { location.hash = "health"; });
  await waitFor("the health table", () => page.$("#health tr[data-gpu]"));
  const health = await shot(page, "web-health");
  const rows = await page.$$eval("#health tr[data-gpu]", (rs) => rs.length);
  await page.evaluate(() => { location.hash = "efficiency"; });
  await waitFor("the efficiency table", () => page.$("#efficiency tr[data-gpu]"));
  const efficiency = await shot(page, "web-efficiency");
  return { health_rows: rows, screenshots: [health, efficiency] };
}

// The KPI panel, fed by a stand-in for the OTLP receiver: /api/v1/gpus
// answered through the agent with a step-time histogram added to GPU 0
// (0.25 s per step), so the page's KPI code runs whatever the receiver sends.
async function checkKpiPanel(browser) {
  const { page, errors } = await openPage(browser);
  let count = 0;
  await page.setRequestInterception(true);
  page.on("request", async (req) => {
    if (!req.url().includes("/api/v1/gpus")) return req.continue();
    const g = JSON.parse((await api("/api/v1/gpus")).body);
    count += 4;
    g.devices[0].kpis = [{ kpi: "step_duration", family: "app_step_duration_seconds",
                           workload: "llama-train", count, sum: count * 0.25 }];
    req.respond({ status: 200, contentType: "application/json", body: JSON.stringify(g) });
  });
  await page.goto(cfg.url + "/#gpu=0", { waitUntil: "load" });
  const text = await waitFor("the KPI panel", () => page.$eval("#detail .kpis", (e) =>
    (/250\.0 ms mean/.test(e.innerText) ? e.innerText : null)), 20000);
  check(errors.length === 0, "page errors with KPIs: " + errors.join("; "));
  const file = await shot(page, "web-kpis");
  await page.close();
  return { text, screenshot: file };
}

async function runCheck(browser) {
  await checkAuth(browser);
  const { page, errors } = await openPage(browser);
  const r = await page.goto(cfg.url + "/", { waitUntil: "load" });
  check(r.status() === 200, "the page answered " + r.status());
  await waitFor("two page cycles", async () => (await cycles(page)) >= 2);
  await control(`inject ${cfg.leak_gpu} memory-leak 4`);
  const gpus = JSON.parse((await api("/api/v1/gpus")).body);
  const out = { cards: await checkCards(page, gpus) };
  out.overview = await shot(page, "web-overview");
  out.lost = await checkLost(page, cfg.lost_gpu);
  out.thermal = await checkThermal(page, cfg.thermal_gpu);
  out.detail = await shot(page, "web-detail-gpu" + cfg.thermal_gpu);
  out.oom = await checkOom(page, cfg.leak_gpu);
  out.tabs = await checkTabs(page);
  check(errors.length === 0, "page errors: " + errors.join("; "));
  out.kpis = await checkKpiPanel(browser);
  return out;
}

async function runScreenshot(browser) {
  const { page } = await openPage(browser);
  await page.goto(cfg.url + "/#gpu=" + cfg.thermal_gpu, { waitUntil: "load" });
  await waitFor("the thermal finding", () =>
    page.$(`#detail .finding[data-kind="thermal_throttle"]`), 120000);
  await new Promise((r) => setTimeout(r, 1500));  // one more cycle: every chart filled
  await page.screenshot({ path: cfg.out, fullPage: true });
  return { out: cfg.out };
}

// The Jobs tab: a row per holder of the agent's ledger, running and ended
// ones, with their GPUs and GPU-hours; cfg.out gets its screenshot.
async function runJobs(browser) {
  const { page, errors } = await openPage(browser);
  await page.goto(cfg.url + "/#jobs", { waitUntil: "load" });
  const want = cfg.rows || [];
  const rows = await waitFor("the jobs table's rows " + want.join(", "), async () => {
    const r = await page.$$eval("#jobs tr[data-job]", (rs) =>
      rs.map((x) => [x.dataset.job, ...[...x.children].map((c) => c.textContent)]));
    return want.every((w) => r.some((x) => x[0] === w && (!cfg.ended || x[2] !== "running" ||
                                                         !cfg.ended.includes(w)))) ? r : null;
  });
  check(errors.length === 0, "page errors: " + errors.join("; "));
  await page.screenshot({ path: cfg.out, fullPage: true });
  return { rows, out: cfg.out };
}

// Page weight (bytes of every response of the load) and time to first draw.
async function runBench(browser) {
  const { page, errors } = await openPage(browser);
  const sizes = {}, wire = {};
  page.on("response", async (resp) => {
    const where = new URL(resp.url()).pathname;
    wire[where] = Number(resp.headers()["content-length"] || 0);
    try {
      sizes[where] = (await resp.buffer()).length;
    } catch (e) { /* redirects have no body */ }
  });
  await page.goto(cfg.url + "/", { waitUntil: "load" });
  const first = await waitFor("the first draw", () =>
    page.evaluate(() => window.gpuscopePage.firstDrawMs), 30000);
  const dataMs = await page.evaluate(() => window.gpuscopePage.dataMs);
  const cards = await page.$$eval(".card", (cs) => cs.length);
  const points = await page.evaluate(() => window.gpuscopePage.series("0", "gpu_util").length);
  const assets = Object.entries(sizes).filter(([p]) => !p.startsWith("/api/"));
  const weight = assets.reduce((a, [, n]) => a + n, 0);
  const data = Object.entries(sizes).filter(([p]) => p.startsWith("/api/"))
    .reduce((a, [, n]) => a + n, 0);
  const sum = (filter) => Object.entries(wire).filter(([p]) => filter(p))
    .reduce((a, [, n]) => a + n, 0);
  check(errors.length === 0, "page errors: " + errors.join("; "));
  if (cfg.hold_seconds) {  // the benchmark measures the agent's CPU meanwhile
    console.error("HOLD");
    await new Promise((r) => setTimeout(r, 1000 * cfg.hold_seconds));
  }
  return { first_draw_ms: first, first_data_ms: dataMs, page_weight_bytes: weight,
           page_wire_bytes: sum((p) => !p.startsWith("/api/")),
           first_data_wire_bytes: sum((p) => p.startsWith("/api/")), first_data_bytes: data, cards,
           points_per_gpu: points, assets: Object.fromEntries(assets) };
}

(async () => {
  const browser = await launch();
  try {
    const run = { check: runCheck, screenshot: runScreenshot, bench: runBench, jobs: runJobs }[mode];
    check(run, "mode: check, screenshot, bench or jobs");
    console.log(JSON.stringify(await run(browser)));
  } catch (e) {
    console.error("FAIL: " + e.message);
    process.exitCode = 1;
  } finally {
    await browser.close();
  }
})();

// gpuscope's live page: polls the JSON API (docs/api.md) at the sampling
// cadence while the page is visible, draws the trailing window with uPlot.
// No framework; every text from the API goes in through textContent.
"use strict";
(() => {
  const WINDOW_METRICS = ["gpu_util", "sm_active", "memory_used", "power_usage", "sm_clock",
                          "mem_clock", "gpu_temp", "clock_reasons"];
  const CHECKS = ["memory", "pcie", "nvlink", "thermal", "power", "xid", "driver"];
  const COLORS = ["#2f6fde", "#e8590c", "#2b8a3e", "#9c36b5", "#c92a2a", "#0b7285"];
  const GiB = 1024 ** 3;
  const st = {
    gpus: null, windows: new Map(), since: 0, diagnosis: [], diagnosisAt: 0, health: null,
    cards: new Map(), detail: null, kpiPrev: new Map(), kpiSeries: new Map(), timer: 0, cycles: 0, tab: "overview", selected: null, jobs: null,
  };
  // For the page tests and the benchmark (web/test/page.js).
  window.gpuscopePage = {
    cycles: 0, firstDrawMs: null, dataMs: null, errors: 0,
    series: (key, m) => (st.windows.has(key) ? st.windows.get(key).s[m].slice() : []),
  };

  // --- small helpers ----------------------------------------------------------
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v; else e.setAttribute(k, v);
    }
    for (const k of kids) if (k != null) e.append(k instanceof Node ? k : String(k));
    return e;
  }
  const fixed = (v, d = 0) => (v == null || !isFinite(v) ? "–" : Number(v).toFixed(d));
  const gib = (b) => fixed(b / GiB, b >= 10 * GiB ? 0 : 1);
  const kindName = (k) => k.replace(/_/g, " ");
  function duration(s) {
    if (s == null) return "–";
    if (s < 90) return fixed(s) + " s";
    if (s < 5400) return fixed(s / 60) + " min";
    return fixed(s / 3600, 1) + " h";
  }
  const keyOf = (d) => (d.mig ? d.gpu + "." + d.mig.gpu_instance_id : String(d.gpu));
  const label = (d) => "GPU " + d.gpu + (d.mig ? " · MIG " + d.mig.profile + " (GI " +
                                          d.mig.gpu_instance_id + ")" : "");
  function who(d) {
    const h = d.holders.map((x) => x.pod ? x.namespace + "/" + x.pod
                                         : x.hpc_job ? "job " + x.hpc_job : x.workload)
                       .filter(Boolean);
    if (h.length) return h.join(", ");
    if (d.processes.length) {
      return d.processes.map((p) => (p.name || "pid " + p.pid) + (p.used_memory_bytes != null
                                              ? " (" + gib(p.used_memory_bytes) + " GiB)" : ""))
                        .join(", ");
    }
    return "no processes";
  }
  async function api(path) {
    const r = await fetch(path, { cache: "no-store" });
    if (!r.ok) throw new Error(path + ": " + r.status + " " + (await r.text()).trim());
    return r.json();
  }

  // --- the trailing window, kept per device and extended with since= ----------
  // Each device keeps the points after its own last one (the query's since is
  // the oldest of those among live devices, so none misses a point).
  function mergeWindow(reply) {
    const cutoff = reply.timestamp - reply.window_seconds;
    for (const dev of reply.devices) {
      const key = keyOf({ gpu: dev.gpu, mig: dev.gpu_instance_id != null
                                             ? { gpu_instance_id: dev.gpu_instance_id } : null });
      let w = st.windows.get(key);
      if (!w) st.windows.set(key, w = { t: [], s: {} });
      const last = w.t.length ? w.t[w.t.length - 1] : -Infinity;
      for (const m of WINDOW_METRICS) w.s[m] = w.s[m] || [];
      dev.t.forEach((t, i) => {
        if (t <= last) return;
        w.t.push(t);
        for (const m of WINDOW_METRICS) w.s[m].push(dev.series[m] ? dev.series[m][i] : null);
      });
      let drop = 0;
      while (drop < w.t.length && w.t[drop] < cutoff) drop++;
      if (drop) {
        w.t.splice(0, drop);
        for (const m of WINDOW_METRICS) w.s[m].splice(0, drop);
      }
    }
    const lasts = [...st.windows.values()].filter((w) => w.t.length).map((w) => w.t[w.t.length - 1]);
    // A device that stopped (lost) does not hold the others back.
    const newest = Math.max(...lasts);
    st.since = lasts.length ? Math.min(...lasts.filter((t) => t >= newest - 10)) : 0;
  }
  // Power, clocks and temperature of a MIG instance ("7.1") are its GPU's ("7").
  const whole = (key) => key.split(".")[0];
  const series = (key, m) => { const w = st.windows.get(key); return w ? w.s[m] : []; };
  const times = (key) => { const w = st.windows.get(key); return w ? w.t : []; };

  // --- charts -----------------------------------------------------------------
  function chart(parent, opts, data) {
    return new uPlot(Object.assign({ legend: { live: false }, cursor: { drag: { x: false } } },
                                   opts), data, parent);
  }
  function sparkline(parent, width) {
    return chart(parent, {
      width, height: 56, legend: { show: false }, cursor: { show: false },
      axes: [{ show: false }, { show: false }],
      scales: { x: { time: true }, y: { range: [0, 100] } },
      series: [{}, { stroke: COLORS[0], width: 1.5, fill: "rgba(47,111,222,.12)" },
               { stroke: COLORS[1], width: 1 }],
    }, [[], [], []]);
  }
  function sparkData(d) {
    const key = keyOf(d), total = d.values.memory_total;
    const mem = series(key, "memory_used").map((v) => v == null || !total ? null : 100 * v / total);
    // MIG instances have no utilization of their own: their SM activity instead.
    const util = d.values.gpu_util != null ? "gpu_util" : "sm_active";
    return [times(key), series(key, util), mem];
  }
  // Throttle reasons as bands: one row per reason seen in the window.
  function reasonBands(reasons) {
    return (u) => {
      const t = u.data[0], mask = u.data[1], { ctx } = u, b = u.bbox;
      const seen = reasons.filter((r) => mask.some((m) => m != null && (m & r.bit)));
      const rowH = Math.min(18 * devicePixelRatio, b.height / Math.max(seen.length, 1));
      ctx.save();
      ctx.font = 11 * devicePixelRatio + "px sans-serif";
      seen.forEach((r, row) => {
        const y = b.top + row * rowH;
        ctx.fillStyle = /thermal|slowdown/.test(r.reason) ? "rgba(208,52,44,.55)"
                      : /power/.test(r.reason) ? "rgba(217,142,4,.55)" : "rgba(47,111,222,.4)";
        for (let i = 0; i < t.length; i++) {
          if (mask[i] == null || !(mask[i] & r.bit)) continue;
          const x0 = u.valToPos(t[i], "x", true);
          const x1 = i + 1 < t.length ? u.valToPos(t[i + 1], "x", true) : x0 + 2;
          ctx.fillRect(x0, y + 1, Math.max(x1 - x0, 1), rowH - 2);
        }
        ctx.fillStyle = "#1d232b";
        ctx.textAlign = "right";
        ctx.fillText(r.reason, b.left - 6 * devicePixelRatio, y + rowH * 0.7);
      });
      if (!seen.length) {
        ctx.fillStyle = "#66707c";
        ctx.textAlign = "left";
        ctx.fillText("no clock event reasons in the window", b.left + 4, b.top + 16);
      }
      ctx.restore();
    };
  }
  function detailCharts(d, box) {
    const width = Math.max(420, Math.min(640, box.clientWidth / 2 - 24));
    const base = { width, height: 170, scales: { x: { time: true } } };
    const specs = [
      { id: "activity", title: "Utilization and SM activity (%)", opts: {
        scales: { x: { time: true }, y: { range: [0, 100] } },
        series: [{}, { label: "utilization", stroke: COLORS[0] },
                 { label: "SM active", stroke: COLORS[1] }] },
        data: (k) => [times(k), series(k, "gpu_util"), series(k, "sm_active")] },
      { id: "memory", title: "Memory used vs total (GiB)", opts: {
        series: [{}, { label: "used", stroke: COLORS[0], fill: "rgba(47,111,222,.1)" },
                 { label: "total", stroke: "#888", dash: [4, 4] }] },
        data: (k, dv) => [times(k), series(k, "memory_used").map((v) => v == null ? null : v / GiB),
                          times(k).map(() => (dv.values.memory_total || 0) / GiB)] },
      { id: "power", title: "Power (W) and clocks (MHz)", opts: {
        scales: { x: { time: true }, W: {}, MHz: {} },
        axes: [{}, { scale: "W" }, { scale: "MHz", side: 1, grid: { show: false } }],
        series: [{}, { label: "power", stroke: COLORS[4], scale: "W" },
                 { label: "limit", stroke: "#c98", dash: [4, 4], scale: "W" },
                 { label: "SM clock", stroke: COLORS[0], scale: "MHz" },
                 { label: "mem clock", stroke: COLORS[5], scale: "MHz" }] },
        data: (k, dv) => [times(whole(k)), series(whole(k), "power_usage"),
                          times(whole(k)).map(() => gpuWide(dv).power_limit ?? null),
                          series(whole(k), "sm_clock"), series(whole(k), "mem_clock")] },
      { id: "temperature", title: "Temperature vs slowdown (°C)", opts: {
        series: [{}, { label: "GPU", stroke: COLORS[4] },
                 { label: "slowdown", stroke: "#c98", dash: [4, 4] }] },
        data: (k, dv) => [times(whole(k)), series(whole(k), "gpu_temp"),
                          times(whole(k)).map(() => gpuWide(dv).slowdown_temp ?? null)] },
      { id: "reasons", title: "Clock event (throttle) reasons", opts: {
        height: 90, legend: { show: false }, scales: { x: { time: true }, y: { range: [0, 1] } },
        axes: [{}, { size: 150, values: () => [], grid: { show: false }, ticks: { show: false } }],
        series: [{}, { show: false }],
        hooks: { draw: [reasonBands(st.gpus.clock_reasons)] } },
        data: (k) => [times(whole(k)), series(whole(k), "clock_reasons")] },
    ];
    return specs.map((s) => {
      const wrap = el("div", { class: "chart", "data-chart": s.id }, el("h3", {}, s.title));
      box.append(wrap);
      const u = chart(wrap, Object.assign({}, base, s.opts), s.data(keyOf(d), d));
      return { spec: s, u, title: wrap.firstChild };
    });
  }

  // --- overview cards -----------------------------------------------------------
  function makeCard(d) {
    const card = el("div", { class: "card", "data-gpu": keyOf(d), tabindex: "0" });
    card.innerHTML = '<h2><span class="name"></span><span class="pill state"></span></h2>' +
      '<div class="model"></div><div class="who"></div><div class="kv">' +
      '<span>util</span><b class="util"></b><span>memory</span><b class="mem"></b>' +
      '<span>power</span><b class="power"></b><span>temp</span><b class="temp"></b></div>' +
      '<div class="bar"><i></i></div><div class="bneck"></div><div class="spark"></div>';
    card.addEventListener("click", () => { location.hash = "gpu=" + keyOf(d); });
    const c = { card, spark: null };
    document.getElementById("cards").append(card);
    c.spark = sparkline(card.querySelector(".spark"), Math.max(card.clientWidth - 24, 200));
    return c;
  }
  // A MIG instance's power and temperature are its GPU's.
  function gpuWide(d) {
    if (!d.mig) return d.values;
    const parent = st.gpus.devices.find((x) => x.gpu === d.gpu && !x.mig);
    return Object.assign({}, parent ? parent.values : {}, d.values);
  }
  function updateCard(c, d) {
    const q = (s) => c.card.querySelector(s), v = gpuWide(d);
    const verdict = d.state !== "ok" ? d.state : d.health ? d.health.verdict : "none";
    c.card.dataset.state = d.state;
    c.card.className = "card " + (d.health ? d.health.verdict : "") +
                       (st.selected === keyOf(d) ? " selected" : "");
    q(".name").textContent = label(d);
    const pill = q(".state");
    pill.className = "pill state " + verdict;
    pill.textContent = d.state !== "ok" ? d.state : d.health ? d.health.verdict : "…";
    pill.title = d.state_reason || (d.health && d.health.problems.length
                                    ? d.health.problems[0].evidence.join("; ") : "");
    q(".model").textContent = d.name + (d.architecture ? " · " + d.architecture : "");
    q(".who").textContent = who(d);
    const util = d.values.gpu_util != null ? fixed(d.values.gpu_util) + " %" : "";
    const sm = d.values.sm_active != null ? "SM " + fixed(d.values.sm_active) + " %" : "";
    q(".util").textContent = [util, sm].filter(Boolean).join(" · ") || "–";
    q(".mem").textContent = gib(v.memory_used) + " / " + gib(v.memory_total) + " GiB";
    const whole = d.mig ? " (GPU " + d.gpu + ")" : "";
    q(".power").textContent = fixed(v.power_usage) + " / " + fixed(v.power_limit) + " W" + whole;
    q(".temp").textContent = fixed(v.gpu_temp) + " °C / slowdown " + fixed(v.slowdown_temp) +
                             " °C" + whole;
    const memPct = v.memory_total ? 100 * v.memory_used / v.memory_total : 0;
    q(".bar i").style.width = fixed(memPct) + "%";
    q(".bar i").className = memPct > 95 ? "hot" : "";
    const b = d.bottleneck;
    q(".bneck").textContent = b ? kindName(b.kind) + " · " + fixed(100 * b.confidence) + " %" +
        (d.oom_eta_seconds != null ? " · OOM in " + duration(d.oom_eta_seconds) : "")
                                : "no bottleneck found yet";
    c.spark.setData(sparkData(d));
  }
  // A vGPU host board's virtual GPUs: one small card per VM's instance, after
  // its board's card (as a MIG instance's card follows its GPU's).
  const LICENSE = { 0: "unknown", 1: "initializing", 2: "grace period", 3: "restricted",
                    4: "unlicensed", 5: "licensed" };
  function makeVgpuCard(key) {
    const card = el("div", { class: "card vgpu", "data-gpu": key });
    card.innerHTML = '<h2><span class="name"></span><span class="pill state"></span></h2>' +
      '<div class="who"></div><div class="kv"><span>SM</span><b class="util"></b>' +
      '<span>memory</span><b class="mem"></b></div><div class="bar"><i></i></div>';
    document.getElementById("cards").append(card);
    return { card, spark: { destroy() {} } };
  }
  function updateVgpuCard(c, d, v) {
    const q = (s) => c.card.querySelector(s);
    q(".name").textContent = "GPU " + d.gpu + " · vGPU " + v.type;
    const licensed = v.license_state == null || v.license_state === 5;
    q(".state").className = "pill state " + (licensed ? "ok" : "warn");
    q(".state").textContent = LICENSE[v.license_state] || "–";
    q(".who").textContent = "VM " + v.vm;
    q(".util").textContent = v.sm_utilization != null ? fixed(100 * v.sm_utilization) + " %" : "–";
    q(".mem").textContent = gib(v.fb_used_bytes) + " / " +
                            gib(v.fb_total_bytes) + " GiB";
    const pct = v.fb_total_bytes ? 100 * v.fb_used_bytes / v.fb_total_bytes : 0;
    q(".bar i").style.width = fixed(pct) + "%";
  }
  function renderCards() {
    const box = document.getElementById("cards"), seen = new Set();
    for (const d of st.gpus.devices) {
      const key = keyOf(d);
      seen.add(key);
      let c = st.cards.get(key);
      if (!c) st.cards.set(key, c = makeCard(d));
      updateCard(c, d);
      for (const v of d.vgpus || []) {
        const vkey = key + ".vgpu" + v.id;
        seen.add(vkey);
        let vc = st.cards.get(vkey);
        if (!vc) st.cards.set(vkey, vc = makeVgpuCard(vkey));
        updateVgpuCard(vc, d, v);
      }
    }
    for (const [key, c] of st.cards) {
      if (!seen.has(key)) { c.spark.destroy(); c.card.remove(); st.cards.delete(key); }
    }
  }

  // --- the selected GPU: charts, KPIs, diagnosis ------------------------------
  function findingView(f) {
    const ev = el("ul", {});
    for (const e of f.evidence) {
      ev.append(el("li", { class: e.met ? "met" : "unmet" }, e.signal + " " + fixed(e.value, 2) +
                (e.comparison ? " " + e.comparison + " " + fixed(e.threshold, 2) : "") + " " +
                e.unit + (e.met ? " ✓" : "")));
    }
    return el("div", { class: "finding", "data-kind": f.kind },
              el("div", {}, el("span", { class: "kind" }, kindName(f.kind)),
                 " · confidence " + fixed(100 * f.confidence) + " %" +
                 (f.fallback ? " (without GPM)" : "")),
              el("div", {}, f.verdict), ev, el("div", { class: "action" }, "Action: " + f.action));
  }
  function renderDiagnosis(d, box) {
    box.replaceChildren(el("h3", {}, "Diagnosis (as gpuscope diagnose prints it)"));
    const g = st.diagnosis.find((x) => x.index === d.gpu &&
                                       (x.gpu_instance_id ?? null) ===
                                       (d.mig ? d.mig.gpu_instance_id : null));
    if (!g) return box.append(el("p", { class: "note" }, "not diagnosed yet"));
    box.append(el("p", { class: "note" }, "window " + fixed(g.window_seconds) + " s, " +
                                          g.points + " samples"));
    if (!g.findings.length) {
      box.append(el("p", {}, g.points < 2 ? "not enough samples in the window to diagnose"
                             : g.window_seconds < 30 ? "the diagnosis needs 30 s of window"
                             : "no bottleneck found" + (g.activity ? ": " + g.activity : "")));
    }
    for (const f of g.findings) box.append(findingView(f));
  }
  // Application KPIs arrive as totals (histogram count and sum, or a counter's
  // sum): successive totals give the mean per interval (a duration) or a rate.
  // Their history starts when the page opens; older history is Prometheus'.
  function trackKpis(g) {
    for (const d of g.devices) {
      for (const k of d.kpis) {
        const id = keyOf(d) + "|" + k.family + "|" + k.workload;
        const prev = st.kpiPrev.get(id);
        st.kpiPrev.set(id, { count: k.count, sum: k.sum, t: g.timestamp });
        if (!prev || g.timestamp <= prev.t) continue;
        let value = null;
        if (k.count > prev.count) value = (k.sum - prev.sum) / (k.count - prev.count);
        else if (k.count === 0 && k.sum >= prev.sum) value = (k.sum - prev.sum) / (g.timestamp - prev.t);
        if (value == null) continue;
        let s = st.kpiSeries.get(id);
        if (!s) st.kpiSeries.set(id, s = { t: [], v: [] });
        s.t.push(g.timestamp);
        s.v.push(value);
        while (s.t.length && s.t[0] < g.timestamp - g.window_seconds) { s.t.shift(); s.v.shift(); }
      }
    }
  }
  function kpiText(k, v) {
    if (v == null) return "waiting for a second reading";
    return k.count > 0 ? fixed(v * 1000, v < 0.01 ? 2 : 1) + " ms mean" : fixed(v, 1) + " /s";
  }
  function renderKpis(d, box) {
    if (!d.kpis.length) {
      box.replaceChildren(el("h3", {}, "Application KPIs"),
                          el("p", { class: "note" }, "No application KPIs for this device. " +
                             "Applications that send step time or latency over OTLP show them here."));
      st.detail.kpiCharts = new Map();
      return;
    }
    const charts = st.detail.kpiCharts || (st.detail.kpiCharts = new Map());
    if (!charts.size) box.replaceChildren(el("h3", {}, "Application KPIs"));
    for (const k of d.kpis) {
      const id = keyOf(d) + "|" + k.family + "|" + k.workload;
      const s = st.kpiSeries.get(id) || { t: [], v: [] };
      let c = charts.get(id);
      if (!c) {
        const wrap = el("div", { class: "kpi", "data-kpi": k.kpi }, el("div", {}), el("div", {}));
        box.append(wrap);
        c = { wrap, u: chart(wrap.lastChild, { width: 300, height: 110, legend: { show: false },
          scales: { x: { time: true } }, series: [{}, { stroke: COLORS[3] }] }, [[], []]) };
        charts.set(id, c);
      }
      c.wrap.firstChild.textContent = k.kpi + " (" + (k.workload || k.family) + "): " +
                                      kpiText(k, s.v.length ? s.v[s.v.length - 1] : null);
      c.u.setData([s.t, s.v.map((v) => (k.count > 0 ? v * 1000 : v))]);
    }
  }
  function renderDetail() {
    const box = document.getElementById("detail");
    const d = st.gpus.devices.find((x) => keyOf(x) === st.selected);
    if (!d) { box.hidden = true; dropDetail(); return; }
    box.hidden = false;
    if (!st.detail || st.detail.key !== st.selected) {
      dropDetail();
      box.replaceChildren(el("h2", {}), el("div", { class: "charts" }),
                          el("div", { class: "panels" }, el("div", { class: "panel diagnosis" }),
                             el("div", { class: "panel kpis" })));
      st.detail = { key: st.selected, charts: detailCharts(d, box.querySelector(".charts")) };
    }
    box.querySelector("h2").textContent = label(d) + " — " + d.name + " — " + who(d);
    for (const c of st.detail.charts) {
      c.u.setData(c.spec.data(st.selected, d));
      if (c.spec.id === "memory") {
        c.title.textContent = c.spec.title + (d.oom_eta_seconds != null
          ? " — out of memory in " + duration(d.oom_eta_seconds) + " at this trend" : "");
      }
    }
    renderDiagnosis(d, box.querySelector(".diagnosis"));
    renderKpis(d, box.querySelector(".kpis"));
  }
  function dropDetail() {
    if (st.detail) for (const c of st.detail.charts) c.u.destroy();
    if (st.detail && st.detail.kpiCharts) for (const c of st.detail.kpiCharts.values()) c.u.destroy();
    st.detail = null;
  }

  // --- health and efficiency tabs -------------------------------------------------
  function renderHealth() {
    const box = document.getElementById("health"), h = st.health;
    if (!h) return;
    // The license check exists only in a vGPU guest: its column only there.
    const checks = CHECKS.concat(h.gpus.some((g) => g.checks.license) ? ["license"] : []);
    const head = el("tr", {}, el("th", {}, "GPU"), el("th", {}, "verdict"),
                    ...checks.map((c) => el("th", {}, c)));
    const table = el("table", {}, head), notes = el("div", {});
    for (const g of h.gpus) {
      const row = el("tr", { "data-gpu": g.gpu }, el("td", {}, "GPU " + g.gpu),
                     el("td", { class: g.verdict }, g.verdict + (g.lost ? " (lost)" : "") +
                                                    (g.stale ? " (stale)" : "")));
      for (const name of checks) {
        const c = g.checks[name];
        row.append(el("td", { class: c ? c.verdict : "na", title: c ? c.evidence.join("\n") : "" },
                      c ? c.verdict : "–"));
        if (c && c.verdict !== "ok") {
          notes.append(el("div", { class: "finding" },
                          el("span", { class: "kind" }, "GPU " + g.gpu + " " + name + ": " +
                                                        c.verdict),
                          el("ul", {}, ...c.evidence.map((e) => el("li", {}, e))),
                          el("div", { class: "action" }, "Action: " + c.action)));
        }
      }
      table.append(row);
    }
    box.replaceChildren(el("p", {}, "Node verdict: " + h.verdict + (h.nvml_up ? "" : " (NVML down)")),
                        table, notes);
  }
  function renderEfficiency() {
    const box = document.getElementById("efficiency");
    const head = el("tr", {}, ...["device", "workload", "util %", "SM active %", "power W",
                                  "memory GiB", "bottleneck", "confidence", "findings"]
      .map((x) => el("th", {}, x)));
    const table = el("table", {}, head);
    for (const d of st.gpus.devices) {
      const g = st.diagnosis.find((x) => x.index === d.gpu && (x.gpu_instance_id ?? null) ===
                                         (d.mig ? d.mig.gpu_instance_id : null));
      const v = d.values, b = d.bottleneck;
      table.append(el("tr", { "data-gpu": keyOf(d) }, el("td", {}, label(d)), el("td", {}, who(d)),
                      el("td", {}, fixed(v.gpu_util)), el("td", {}, fixed(v.sm_active)),
                      el("td", {}, fixed(v.power_usage)),
                      el("td", {}, gib(v.memory_used) + " / " + gib(v.memory_total)),
                      el("td", {}, b ? kindName(b.kind) : "–"),
                      el("td", {}, b ? fixed(100 * b.confidence) + " %" : "–"),
                      el("td", {}, g ? g.findings.map((f) => kindName(f.kind)).join(", ") : "–")));
    }
    box.replaceChildren(el("p", { class: "note" }, "Bottlenecks from the diagnosis over the " +
                                                   "trailing window; utilization and power now."),
                        table,
                        el("p", { class: "note" }, "Whether this is normal for each workload: " +
                           "the per-workload baselines live in Prometheus (gpu-baselines.yml); " +
                           "`gpuscope baseline` reports them (docs/baselines.md)."));
  }

  // --- jobs tab: the agent's job ledger (/api/v1/jobs, docs/reports.md) -----------
  function jobTotals(j) {
    const t = { held: 0, busy: 0, sm: 0, smKnown: false, energy: 0, idle: 0, throttled: 0, peak: 0 };
    for (const d of j.devices) {
      t.held += d.held_seconds; t.busy += d.busy_seconds; t.idle += d.idle_held_seconds;
      t.throttled += d.throttled_seconds; t.energy += d.energy_joules || 0;
      if (d.sm_active_seconds != null) { t.sm += d.sm_active_seconds; t.smKnown = true; }
      t.peak = Math.max(t.peak, d.memory_peak_bytes);
    }
    return t;
  }
  function renderJobs() {
    const box = document.getElementById("jobs");
    if (!st.jobs) return;
    const head = el("tr", {}, ...["holder", "state", "GPUs", "GPU-hours", "busy %", "SM active %",
                                  "peak memory GiB", "energy kWh", "idle-held", "throttled",
                                  "findings"].map((x) => el("th", {}, x)));
    const table = el("table", {}, head);
    for (const j of st.jobs) {
      const t = jobTotals(j);
      const pct = (v) => (t.held > 0 ? fixed(100 * v / t.held) : "–");
      const state = j.end == null ? "running"
                                  : "ended " + new Date(j.end * 1000).toLocaleTimeString();
      table.append(el("tr", { "data-job": j.kind + ":" + j.id },
                      el("td", {}, j.kind + " " + j.id), el("td", {}, state),
                      el("td", {}, j.devices.map((d) => d.gpu + (d.mig_profile ? " (" +
                                                 d.mig_profile + ")" : "")).join(", ")),
                      el("td", {}, fixed(t.held / 3600, 2)), el("td", {}, pct(t.busy)),
                      el("td", {}, t.smKnown ? pct(t.sm) : "–"), el("td", {}, gib(t.peak)),
                      el("td", {}, fixed(t.energy / 3.6e6, 3)), el("td", {}, duration(t.idle)),
                      el("td", {}, duration(t.throttled)),
                      el("td", {}, [...new Set(j.findings.map((f) => kindName(f.kind)))]
                                     .join(", ") || "–")));
    }
    box.replaceChildren(el("p", { class: "note" }, "What each Slurm job, pod and workload used " +
                           "since this agent first saw it; ended ones are kept for a day. " +
                           "`gpuscope report job ID --agent URL` prints a job's report with " +
                           "its notes (docs/reports.md)."),
                        st.jobs.length ? table : el("p", {}, "No jobs, pods or workloads seen yet."));
  }

  // --- polling -------------------------------------------------------------------
  async function cycle() {
    const now = Date.now() / 1000;
    const wantDiagnosis = now - st.diagnosisAt > 5 || !st.diagnosis.length;
    const [g, w, diagnosis, health, jobs] = await Promise.all([
      api("/api/v1/gpus"),
      api("/api/v1/window?gpu=all&metrics=" + WINDOW_METRICS.join(",") +
          (st.since ? "&since=" + st.since : "")),
      wantDiagnosis ? api("/api/v1/diagnosis") : null,
      st.tab === "health" ? api("/api/v1/health") : null,
      st.tab === "jobs" ? api("/api/v1/jobs") : null]);
    if (window.gpuscopePage.dataMs == null) window.gpuscopePage.dataMs = performance.now();
    st.gpus = g;
    mergeWindow(w);
    trackKpis(g);
    if (diagnosis) { st.diagnosis = diagnosis.gpus; st.diagnosisAt = now; }
    if (health) st.health = health;
    if (jobs) st.jobs = jobs.jobs;
    document.getElementById("host").textContent = g.hostname + " · " + g.agent.source +
                                                  " · gpuscope " + g.agent.version;
    render();
  }
  function render() {
    if (!st.gpus) return;
    if (st.tab === "overview") { renderCards(); renderDetail(); }
    if (st.tab === "health") renderHealth();
    if (st.tab === "efficiency") renderEfficiency();
    if (st.tab === "jobs") renderJobs();
  }
  async function tick() {
    if (st.busy) return;  // one cycle at a time
    st.busy = true;
    clearTimeout(st.timer);
    st.timer = 0;
    const status = document.getElementById("status");
    try {
      await cycle();
      st.cycles++;
      window.gpuscopePage.cycles = st.cycles;
      if (window.gpuscopePage.firstDrawMs == null) {
        window.gpuscopePage.firstDrawMs = performance.now();
        performance.mark("gpuscope-first-draw");
      }
      status.className = "";
      status.textContent = "live · every " + st.gpus.interval_seconds + " s";
    } catch (e) {
      window.gpuscopePage.errors++;
      status.className = "down";
      status.textContent = "agent unreachable: " + e.message;
    }
    st.busy = false;
    // Only a visible page polls: a hidden tab costs the agent nothing.
    if (!document.hidden) {
      const every = 1000 * Math.max(st.gpus ? st.gpus.interval_seconds : 1, 0.5);
      st.timer = setTimeout(tick, every);
    }
  }
  function route() {
    const hash = location.hash.replace(/^#/, "");
    st.selected = hash.startsWith("gpu=") ? hash.slice(4) : null;
    st.tab = ["health", "efficiency", "jobs"].includes(hash) ? hash : "overview";
    for (const id of ["overview", "health", "efficiency", "jobs"]) {
      document.getElementById(id).hidden = id !== st.tab;
    }
    for (const a of document.querySelectorAll("#tabs a")) {
      a.classList.toggle("active", a.dataset.tab === st.tab);
    }
    if (st.tab !== "overview") dropDetail();
    if ((st.tab === "health" && !st.health) || (st.tab === "jobs" && !st.jobs)) tick();
    else render();
  }
  window.addEventListener("hashchange", route);
  document.addEventListener("visibilitychange", () => { if (!document.hidden && !st.timer) tick(); });
  route();
  tick();
})();

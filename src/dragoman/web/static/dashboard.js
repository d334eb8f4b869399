// The live dashboard: polls /v1/stats every second for the points it has not seen (the server
// samples its metrics once a second and computes rates and percentiles itself), then redraws
// the tiles and the charts. The same page serves a server and `dragoman route`.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const KEY = "dragoman.metricsKey";
  const KEEP_SECONDS = 300;
  const PALETTE = ["#2f6fe0", "#e07b00", "#1e9e5a", "#c0392b", "#8e44ad", "#00838f", "#7f8c8d"];
  let points = [];
  let kind = null;
  let tiles = [];
  let charts = [];
  let since = null;
  let failures = 0;

  const num = (v, digits = 1, unit = "") =>
    v === null || v === undefined ? "–" : `${Number(v).toFixed(Math.abs(v) >= 100 ? 0 : digits)}${unit}`;
  const secs = dragoman.seconds;
  const sum = (o) => Object.values(o || {}).reduce((a, b) => a + b, 0);

  function tile(label, value, sub) {
    return { label, value, sub };
  }

  function serverTiles(st, p) {
    const rejected = st.totals.rejected || {};
    const reasons = Object.entries(rejected).sort((a, b) => b[1] - a[1]).slice(0, 3)
      .map(([k, v]) => `${k} ${v}`).join(", ");
    return [
      tile("Requests/s", num(p.requests_per_s), `${num(p.texts_per_s)} texts/s`),
      tile("Output tokens/s", num(p.output_tokens_per_s, 0), `${st.totals.output_tokens ?? 0} in all`),
      tile("Running", num(p.running, 0), st.engine_metrics ? "in the engine's batch" : "in the engine"),
      tile("Waiting", num(p.waiting, 0), st.engine_metrics ? "queued in the engine" : "not reported"),
      tile("KV cache", num(p.kv_cache_percent, 1, "%"), st.engine_metrics ? "of the cache in use" : "not reported"),
      tile("In flight", num(p.in_flight, 0), st.admission_limit ? `admission limit ${st.admission_limit}` : "no admission limit"),
      tile("Queue p99", secs(p.queue_p99), `p50 ${secs(p.queue_p50)} · per text, last 10 s`),
      tile("Inference p99", secs(p.inference_p99), `p50 ${secs(p.inference_p50)} · per text, last 10 s`),
      tile("CPU", num(p.cpu_percent, 0, "%"), `server ${num(p.process_cpu_percent, 0, "%")}`),
      tile("Rejected", String(sum(rejected)), reasons || "none"),
      tile("Aborted", String(st.totals.aborted ?? 0), `${st.totals.expired ?? 0} past their deadline`),
    ];
  }

  function routerTiles(st, p) {
    const healthy = st.backends.filter((b) => b.healthy).length;
    return [
      tile("Requests/s", num(p.requests_per_s), `${st.totals.requests ?? 0} in all`),
      tile("Healthy backends", `${healthy} / ${st.backends.length}`, ""),
      tile("Latency p99", secs(p.latency_p99), `p50 ${secs(p.latency_p50)} · last 10 s`),
      tile("Retries/s", num(p.retries_per_s), `${st.totals.retries ?? 0} in all`),
      tile("Rejected", String(sum(st.totals.rejected)), ""),
      tile("CPU", num(p.cpu_percent, 0, "%"), `proxy ${num(p.process_cpu_percent, 0, "%")}`),
    ];
  }

  function chart(title, options, note = "") {
    const figure = document.createElement("figure");
    figure.className = "chart";
    const caption = document.createElement("figcaption");
    caption.textContent = title;
    if (note) {
      const small = document.createElement("div");
      small.className = "muted";
      small.style.fontWeight = "normal";
      small.style.fontSize = ".8rem";
      small.textContent = note;
      caption.append(small);
    }
    const canvas = document.createElement("canvas");
    canvas.setAttribute("role", "img");
    canvas.dataset.chart = title;
    const legend = document.createElement("div");
    legend.className = "legend";
    figure.append(caption, canvas, legend);
    $("charts").append(figure);
    const c = new LineChart(canvas, legend, options);
    charts.push(c);
    return c;
  }

  const line = (label, color, get, extra = {}) => ({ label, color, get, ...extra });

  function setupServer(st) {
    const none = st.engine_metrics ? "" : "Waiting and KV cache come from vLLM's metrics, which this architecture does not have.";
    chart("Throughput", { unit: "/s", series: [
      line("requests", PALETTE[0], (p) => p.requests_per_s),
      line("texts", PALETTE[2], (p) => p.texts_per_s),
      line("rejected", PALETTE[3], (p) => p.rejected_per_s),
      line("aborted", PALETTE[4], (p) => p.aborted_per_s, { dash: [4, 3] }),
    ] });
    chart("Output tokens/s", { digits: 0, series: [line("tokens/s", PALETTE[1], (p) => p.output_tokens_per_s)] });
    chart("Engine requests", { digits: 0, series: [
      line("running", PALETTE[0], (p) => p.running),
      line("waiting", PALETTE[1], (p) => p.waiting),
      line("admitted in flight", PALETTE[6], (p) => p.in_flight, { dash: [4, 3] }),
    ] }, none);
    chart("Latency: queue and inference (p50, p99 over 10 s)", { unit: " s", digits: 2, series: [
      line("queue p50", PALETTE[1], (p) => p.queue_p50),
      line("queue p99", PALETTE[1], (p) => p.queue_p99, { dash: [5, 3] }),
      line("inference p50", PALETTE[0], (p) => p.inference_p50),
      line("inference p99", PALETTE[0], (p) => p.inference_p99, { dash: [5, 3] }),
      line("request p99", PALETTE[6], (p) => p.latency_p99, { width: 1 }),
    ] });
    chart("KV cache use", { max: 100, unit: "%", series: [line("KV cache", PALETTE[4], (p) => p.kv_cache_percent)] }, none);
    chart("CPU utilisation", { max: 100, unit: "%", digits: 0, series: [
      line("machine", PALETTE[5], (p) => p.cpu_percent),
      line("server and engine", PALETTE[0], (p) => p.process_cpu_percent),
    ] });
  }

  let backendNames = [];
  function backendSeries(field) {
    return backendNames.map((name, i) =>
      line(name, PALETTE[i % PALETTE.length], (p) => (p.backends && p.backends[name] ? p.backends[name][field] : null)));
  }

  function setupRouter(st) {
    backendNames = st.backends.map((b) => b.name);
    chart("Requests/s per backend", { unit: "/s", series: backendSeries("requests_per_s") });
    chart("Outstanding per backend", { digits: 0, series: backendSeries("outstanding") });
    chart("Latency through the proxy (p50, p99 over 10 s)", { unit: " s", digits: 2, series: [
      line("p50", PALETTE[0], (p) => p.latency_p50),
      line("p99", PALETTE[0], (p) => p.latency_p99, { dash: [5, 3] }),
    ] });
    chart("CPU utilisation", { max: 100, unit: "%", digits: 0, series: [
      line("machine", PALETTE[5], (p) => p.cpu_percent),
      line("proxy", PALETTE[0], (p) => p.process_cpu_percent),
    ] });
  }

  function setup(st) {
    kind = st.kind;
    charts = [];
    $("charts").replaceChildren();
    $("backends").hidden = kind !== "router";
    if (kind === "router") setupRouter(st);
    else setupServer(st);
    $("about").textContent = `A point every ${st.interval_seconds} s, rates between consecutive samples and percentiles over the last ${st.window_seconds} s, computed by the server; the charts show the last two minutes.`;
  }

  function renderTiles(list) {
    const root = $("tiles");
    if (root.children.length !== list.length) {
      root.replaceChildren(...list.map(() => {
        const d = document.createElement("div");
        d.className = "tile";
        d.innerHTML = '<div class="label"></div><div class="value"></div><div class="sub"></div>';
        return d;
      }));
    }
    list.forEach((t, i) => {
      const [label, value, sub] = root.children[i].children;
      label.textContent = t.label;
      value.textContent = t.value;
      sub.textContent = t.sub;
      root.children[i].dataset.tile = t.label;
    });
  }

  function renderBackends(st, p) {
    const rows = st.backends.map((b) => {
      const live = (p && p.backends && p.backends[b.name]) || {};
      const tr = document.createElement("tr");
      const link = document.createElement("a");
      link.href = `${b.url}/dashboard`;
      link.textContent = b.name;
      link.title = b.url;
      const cells = [
        link,
        b.healthy ? "healthy" : "out",
        String(b.outstanding),
        num(live.requests_per_s),
        num(live.errors_per_s),
        secs(live.latency_p50),
        secs(live.latency_p99),
        String(b.pairs),
      ];
      for (const [i, c] of cells.entries()) {
        const td = document.createElement("td");
        td.append(c);
        if (i === 1) td.className = b.healthy ? "state-up" : "state-down";
        tr.append(td);
      }
      return tr;
    });
    $("backends").tBodies[0].replaceChildren(...rows);
    const names = st.backends.map((b) => b.name);
    if (names.join() !== backendNames.join()) {
      backendNames = names;
      charts[0].setSeries(backendSeries("requests_per_s"));
      charts[1].setSeries(backendSeries("outstanding"));
    }
  }

  function render(st) {
    if (st.kind !== kind) setup(st);
    const p = points.length ? points[points.length - 1] : {};
    if (kind === "router") {
      renderTiles(routerTiles(st, p));
      renderBackends(st, p);
    } else {
      renderTiles(serverTiles(st, p));
    }
    for (const c of charts) c.draw(points);
    const when = p.t ? new Date(p.t * 1000).toLocaleTimeString() : "no sample yet";
    const what = kind === "router" ? "dragoman route" : `${st.model || "model loading"} · engine ${st.engine} · ${st.architecture}`;
    $("status").textContent = `${what} · updated ${when}`;
  }

  async function poll() {
    try {
      const path = since === null ? "v1/stats" : `v1/stats?since=${since}`;
      const st = await dragoman.request(path, { keyName: KEY });
      points.push(...st.points);
      if (points.length) {
        since = points[points.length - 1].t;
        points = points.filter((p) => p.t > since - KEEP_SECONDS);
      }
      render(st);
      $("error").hidden = true;
      failures = 0;
    } catch (err) {
      failures += 1;
      const message = dragoman.capitalise(err.message);
      if (err.status === 401) {
        $("key-form").hidden = false;
        $("metrics-key").focus();
      }
      $("error").textContent = err.status === 401 ? message : `${message} Retrying…`;
      $("error").hidden = false;
      $("status").textContent = "Not updating";
      if (err.status === 401) return;  // wait for the key
    }
    setTimeout(poll, failures ? Math.min(10000, 1000 * 2 ** failures) : 1000);
  }

  $("key-form").addEventListener("submit", (e) => {
    e.preventDefault();
    dragoman.setKey(KEY, $("metrics-key").value.trim());
    $("key-form").hidden = true;
    failures = 0;
    poll();
  });
  window.addEventListener("resize", () => { for (const c of charts) c.draw(points); });

  poll();
})();

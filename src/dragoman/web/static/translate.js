// The translate page: languages from /v1/languages (a server's, or the proxy's pairs), the
// limit and whether a key is needed from /frontend/settings, translation by POST /v1/translate.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const ui = {
    source: $("source"), target: $("target"), swap: $("swap"), text: $("text"),
    count: $("count"), go: $("translate"), result: $("result"), timing: $("timing"),
    copy: $("copy"), error: $("error"), keyForm: $("key-form"), key: $("api-key"), model: $("model"),
  };
  const KEY = "dragoman.apiKey";
  const CHOICE = "dragoman.languages";
  let charLimit = null;
  let names = {};          // code -> name
  let targetsOf = null;    // source -> Set of targets (servers that list pairs), else null
  let allCodes = [];
  let detected = null;     // language detected for the last translation, for swap
  let inFlight = null;     // AbortController of the running request
  let shownFor = null;     // the input text the shown result translates

  const name = (code) => names[code] || dragoman.languageName(code);

  function showError(message) {
    ui.error.textContent = message;
    ui.error.hidden = !message;
  }

  function option(code, label) {
    const o = document.createElement("option");
    o.value = code;
    o.textContent = label;
    return o;
  }

  function fillTargets() {
    const source = ui.source.value;
    const keep = ui.target.value;
    let codes = allCodes.filter((c) => c !== source);
    if (targetsOf && source !== "auto") codes = [...(targetsOf.get(source) || [])];
    else if (targetsOf) codes = [...new Set([...targetsOf.values()].flatMap((s) => [...s]))];
    codes.sort((a, b) => name(a).localeCompare(name(b)));
    ui.target.replaceChildren(...codes.map((c) => option(c, name(c))));
    if (codes.includes(keep)) ui.target.value = keep;
    else if (codes.includes("en") && source !== "en") ui.target.value = "en";
  }

  function remember() {
    try {
      localStorage.setItem(CHOICE, JSON.stringify([ui.source.value, ui.target.value]));
    } catch {
      /* not kept: fine */
    }
  }

  function restore() {
    try {
      const [source, target] = JSON.parse(localStorage.getItem(CHOICE) || "[]");
      if ([...ui.source.options].some((o) => o.value === source)) ui.source.value = source;
      fillTargets();
      if ([...ui.target.options].some((o) => o.value === target)) ui.target.value = target;
    } catch {
      fillTargets();
    }
  }

  function setLanguages(data) {
    const listed = Array.isArray(data.languages) ? data.languages : [];
    for (const l of listed) names[l.code] = l.name;
    if (Array.isArray(data.pairs)) {
      targetsOf = new Map();
      for (const p of data.pairs) {
        if (!targetsOf.has(p.source)) targetsOf.set(p.source, new Set());
        targetsOf.get(p.source).add(p.target);
      }
    }
    const codes = new Set(listed.map((l) => l.code));
    if (targetsOf) for (const [s, ts] of targetsOf) { codes.add(s); ts.forEach((t) => codes.add(t)); }
    allCodes = [...codes].sort((a, b) => name(a).localeCompare(name(b)));
    const sources = targetsOf ? allCodes.filter((c) => targetsOf.has(c)) : allCodes;
    ui.source.replaceChildren(option("auto", "Detect language"), ...sources.map((c) => option(c, name(c))));
    restore();
    if (data.model) ui.model.textContent = `model: ${data.model}`;
  }

  async function loadLanguages() {
    for (let wait = 1000; ; wait = Math.min(wait * 2, 10000)) {
      try {
        setLanguages(await dragoman.request("v1/languages"));
        showError("");
        return;
      } catch (err) {
        showError(`${dragoman.capitalise(err.message)} Trying again…`);
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  async function loadSettings() {
    // Asked again while the server answers 503 (its engine still loading) or cannot be
    // reached; an older server without the route has nothing to say.
    for (let wait = 1000; ; wait = Math.min(wait * 2, 10000)) {
      try {
        const s = await dragoman.request("frontend/settings");
        charLimit = Number.isFinite(s.charLimit) && s.charLimit > 0 ? s.charLimit : null;
        if (s.keyRequired && !dragoman.key(KEY)) askForKey("");
        updateCount();
        return;
      } catch (err) {
        updateCount();
        if (err.status !== 503 && err.status !== 0) return;
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  function askForKey(message) {
    ui.keyForm.hidden = false;
    ui.key.value = dragoman.key(KEY);
    if (message) showError(message);
    ui.key.focus();
  }

  function updateCount() {
    const n = [...ui.text.value].length;  // code points, as the server counts
    const over = charLimit !== null && n > charLimit;
    ui.count.textContent = charLimit === null
      ? `${n.toLocaleString()} characters`
      : `${n.toLocaleString()} / ${charLimit.toLocaleString()}`;
    ui.count.classList.toggle("over", over);
    ui.count.title = over ? `Over this server's limit of ${charLimit.toLocaleString()} characters` : "";
  }

  const seconds = dragoman.seconds;

  function showResult(data, roundTrip, text) {
    const item = data.translations[0];
    ui.result.textContent = item.text;
    shownFor = text;
    ui.copy.disabled = false;
    detected = item.detected_source_lang || null;
    const t = data.timing;
    const parts = [
      `${seconds(t.total_seconds)} on the server`,
      `${seconds(t.queue_seconds)} queueing`,
      `${seconds(t.inference_seconds)} translating`,
    ];
    let line = `${parts.join(" · ")} (${seconds(roundTrip)} round trip)`;
    if (ui.source.value === "auto") {
      line = (detected ? `Detected ${name(detected)}. ` : "No language detected. ") + line;
    }
    ui.timing.textContent = line;
    ui.timing.title = `${data.model}: ${data.usage.input_tokens} tokens in, ${data.usage.output_tokens} out`;
  }

  async function translate() {
    const text = ui.text.value;
    if (!text.trim()) {
      showError("Type some text to translate first.");
      ui.text.focus();
      return;
    }
    if (inFlight) inFlight.abort();
    const controller = (inFlight = new AbortController());
    showError("");
    ui.go.disabled = true;
    ui.go.textContent = "Translating…";
    ui.result.setAttribute("aria-busy", "true");
    const format = document.querySelector('input[name="format"]:checked').value;
    const body = { text, source_lang: ui.source.value, target_lang: ui.target.value, format };
    const started = performance.now();
    try {
      const data = await dragoman.request("v1/translate", {
        method: "POST", body, keyName: KEY, signal: controller.signal,
      });
      showResult(data, (performance.now() - started) / 1000, text);
    } catch (err) {
      if (err.name === "AbortError") return;
      ui.result.textContent = "";
      ui.timing.textContent = "";
      ui.copy.disabled = true;
      const message = dragoman.capitalise(err.message);
      if (err.status === 401) askForKey(message);
      else showError(message);
    } finally {
      if (inFlight === controller) {
        inFlight = null;
        ui.go.disabled = false;
        ui.go.textContent = "Translate";
        ui.result.removeAttribute("aria-busy");
      }
    }
  }

  function swap() {
    const from = ui.source.value === "auto" ? detected : ui.source.value;
    if (!from) return;
    const to = ui.target.value;
    if (![...ui.source.options].some((o) => o.value === to)) return;
    // A translation still running is of the old direction: its reply must not land.
    if (inFlight) inFlight.abort();
    ui.source.value = to;
    fillTargets();
    if ([...ui.target.options].some((o) => o.value === from)) ui.target.value = from;
    // The result becomes the input only when it translates the text still there: text typed
    // since is the user's and stays.
    if (ui.result.textContent && shownFor === ui.text.value) {
      ui.text.value = ui.result.textContent;
      updateCount();
    }
    ui.result.textContent = "";
    ui.timing.textContent = "";
    ui.copy.disabled = true;
    shownFor = null;
    remember();
  }

  async function copy() {
    const text = ui.result.textContent;
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      const range = document.createRange();  // no clipboard permission: select, then copy
      range.selectNodeContents(ui.result);
      const sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      document.execCommand("copy");
    }
    ui.copy.textContent = "Copied";
    setTimeout(() => { ui.copy.textContent = "Copy"; }, 1500);
  }

  ui.text.addEventListener("input", updateCount);
  ui.go.addEventListener("click", translate);
  ui.swap.addEventListener("click", swap);
  ui.copy.addEventListener("click", copy);
  ui.source.addEventListener("change", () => { fillTargets(); remember(); });
  ui.target.addEventListener("change", remember);
  ui.keyForm.addEventListener("submit", (e) => {
    e.preventDefault();
    dragoman.setKey(KEY, ui.key.value.trim());
    ui.keyForm.hidden = true;
    showError("");
    if (ui.text.value.trim()) translate();
    else ui.text.focus();
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      translate();
    } else if (e.altKey && (e.key === "s" || e.key === "S")) {
      e.preventDefault();
      swap();
    }
  });

  updateCount();
  loadSettings();
  loadLanguages();
})();

// The files page: a dropped or chosen file goes to POST /v1/documents; its job is polled at
// GET /v1/documents/{id} (segments done of total) until done or failed; the translated file
// downloads from GET /v1/documents/{id}/result; Cancel is DELETE. Languages come from
// /v1/languages, the accepted file types and whether a key is needed from /frontend/settings.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const ui = {
    source: $("source"), target: $("target"), drop: $("drop"), file: $("file"),
    formats: $("formats"), jobs: $("jobs"), rows: document.querySelector("#jobs tbody"),
    error: $("error"), keyForm: $("key-form"), key: $("api-key"), model: $("model"),
  };
  const KEY = "dragoman.apiKey";
  const POLL_MS = 500;
  let pending = null;  // a file waiting for a key

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

  async function loadLanguages() {
    for (let wait = 1000; ; wait = Math.min(wait * 2, 10000)) {
      try {
        const data = await dragoman.request("v1/languages");
        const codes = (data.languages || []).map((l) => l.code);
        const named = (c) => (data.languages.find((l) => l.code === c) || {}).name || dragoman.languageName(c);
        codes.sort((a, b) => named(a).localeCompare(named(b)));
        ui.source.replaceChildren(option("auto", "Detect language"), ...codes.map((c) => option(c, named(c))));
        ui.target.replaceChildren(...codes.map((c) => option(c, named(c))));
        if (codes.includes("en")) ui.target.value = "en";
        if (data.model) ui.model.textContent = `model: ${data.model}`;
        showError("");
        return;
      } catch (err) {
        showError(`${dragoman.capitalise(err.message)} Trying again…`);
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  async function loadSettings() {
    for (let wait = 1000; ; wait = Math.min(wait * 2, 10000)) {
      try {
        const s = await dragoman.request("frontend/settings");
        const kinds = Array.isArray(s.supportedFilesFormat) ? s.supportedFilesFormat : [];
        ui.formats.textContent = kinds.length ? `Accepted: ${kinds.join(", ")}.` : "";
        if (kinds.length) ui.file.accept = kinds.join(",");
        if (s.keyRequired && !dragoman.key(KEY)) askForKey("");
        return;
      } catch (err) {
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

  function headers() {
    const k = dragoman.key(KEY);
    return k ? { Authorization: `Bearer ${k}`, Accept: "application/json" } : { Accept: "application/json" };
  }

  // A non-JSON request (the upload, the download) with the same error sentences as the rest.
  async function send(path, init) {
    let response;
    try {
      response = await fetch(path, { ...init, headers: headers() });
    } catch {
      throw new dragoman.ApiError(0, "unreachable", "Could not reach the server. Is it running?");
    }
    if (response.ok) return response;
    let data = null;
    try { data = await response.json(); } catch { data = null; }
    const e = data && data.error;
    const message = e && typeof e === "object" && e.message ? String(e.message)
      : `The server answered ${response.status}.`;
    throw new dragoman.ApiError(response.status, (e && e.code) || "", message);
  }

  function row(name, target) {
    const tr = document.createElement("tr");
    const cell = (text) => { const td = document.createElement("td"); td.textContent = text; tr.append(td); return td; };
    cell(name);
    cell(dragoman.languageName(target));
    const progress = document.createElement("progress");
    progress.max = 1;
    progress.value = 0;
    cell("").append(progress);
    const status = cell("Uploading…");
    status.className = "status";
    const actions = cell("");
    ui.rows.prepend(tr);
    ui.jobs.hidden = false;
    return { tr, progress, status, actions };
  }

  function button(text, onClick) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = text;
    b.addEventListener("click", onClick);
    return b;
  }

  async function download(job, name) {
    const response = await send(job.links.result.replace(/^\//, ""), { method: "GET" });
    const blob = await response.blob();
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = name;
    a.textContent = "Download";
    a.className = "download";
    return a;
  }

  async function follow(job, r) {
    const path = `v1/documents/${encodeURIComponent(job.id)}`;
    let stopped = false;
    r.actions.replaceChildren(button("Cancel", async () => {
      stopped = true;
      try { await send(path, { method: "DELETE" }); } catch (err) { showError(dragoman.capitalise(err.message)); }
      r.status.textContent = "Cancelled";
      r.actions.replaceChildren();
    }));
    while (!stopped) {
      const total = job.segments_total || 0;
      r.progress.max = Math.max(total, 1);
      r.progress.value = job.segments_done || 0;
      if (job.status === "done") {
        r.progress.value = r.progress.max;
        r.status.textContent = `Done (${job.segments_done} of ${total} segments)`;
        const name = job.filename;
        r.actions.replaceChildren(await download(job, name));
        return;
      }
      if (job.status === "error") {
        r.status.textContent = `Failed: ${job.error || "unknown error"}`;
        r.actions.replaceChildren();
        return;
      }
      r.status.textContent = job.status === "queued" ? "Queued"
        : `Translating: ${job.segments_done} of ${total} segments`;
      await new Promise((done) => setTimeout(done, POLL_MS));
      if (stopped) return;
      job = await dragoman.request(path, { keyName: KEY });
    }
  }

  async function upload(file) {
    if (!file) return;
    showError("");
    const r = row(file.name, ui.target.value);
    const form = new FormData();
    form.append("file", file, file.name);
    form.append("target_lang", ui.target.value);
    form.append("source_lang", ui.source.value);
    try {
      const response = await send("v1/documents", { method: "POST", body: form });
      await follow(await response.json(), r);
    } catch (err) {
      const message = dragoman.capitalise(err.message);
      r.status.textContent = `Failed: ${message}`;
      r.actions.replaceChildren();
      if (err.status === 401) { pending = file; askForKey(message); }
    }
  }

  ui.file.addEventListener("change", () => { upload(ui.file.files[0]); ui.file.value = ""; });
  ui.drop.addEventListener("keydown", (e) => {
    if (e.key === "Enter" || e.key === " ") { e.preventDefault(); ui.file.click(); }
  });
  ["dragenter", "dragover"].forEach((t) => ui.drop.addEventListener(t, (e) => {
    e.preventDefault();
    ui.drop.classList.add("over");
  }));
  ["dragleave", "drop"].forEach((t) => ui.drop.addEventListener(t, () => ui.drop.classList.remove("over")));
  ui.drop.addEventListener("drop", (e) => {
    e.preventDefault();
    upload(e.dataTransfer.files[0]);
  });
  ui.keyForm.addEventListener("submit", (e) => {
    e.preventDefault();
    dragoman.setKey(KEY, ui.key.value.trim());
    ui.keyForm.hidden = true;
    showError("");
    if (pending) { const f = pending; pending = null; upload(f); }
  });

  loadSettings();
  loadLanguages();
})();

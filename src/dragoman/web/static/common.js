// Shared by both pages: requests to this server with an optional Bearer key kept for the tab
// (sessionStorage), and error bodies of any of dragoman's API shapes turned into one sentence.
"use strict";

const dragoman = (() => {
  class ApiError extends Error {
    constructor(status, code, message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  // Native {"error": {"code", "message"}}, LibreTranslate {"error": "..."}, DeepL
  // {"message": "..."}, FastAPI {"detail": ...}; else the status line.
  function describe(status, body, statusText) {
    if (body && typeof body === "object") {
      const e = body.error;
      if (e && typeof e === "object" && e.message) return [e.code || "", String(e.message)];
      if (typeof e === "string") return ["", e];
      if (typeof body.message === "string") return ["", body.message];
      if (typeof body.detail === "string") return ["", body.detail];
    }
    return ["", `The server answered ${status}${statusText ? " " + statusText : ""}.`];
  }

  function key(name) {
    try {
      return sessionStorage.getItem(name) || "";
    } catch {
      return "";  // storage blocked: ask again next time
    }
  }

  function setKey(name, value) {
    try {
      if (value) sessionStorage.setItem(name, value);
      else sessionStorage.removeItem(name);
    } catch {
      /* storage blocked: the key lives as long as the page */
    }
  }

  // fetch() relative to the page (so the pages work under a path prefix too); JSON in and out.
  async function request(path, { method = "GET", body, keyName, signal } = {}) {
    const headers = { Accept: "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const k = keyName ? key(keyName) : "";
    if (k) headers.Authorization = `Bearer ${k}`;
    let response;
    try {
      response = await fetch(path, {
        method, headers, signal, body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      if (err.name === "AbortError") throw err;
      throw new ApiError(0, "unreachable", "Could not reach the server. Is it running?");
    }
    let data = null;
    try {
      data = await response.json();
    } catch {
      data = null;
    }
    if (!response.ok) {
      const [code, message] = describe(response.status, data, response.statusText);
      const retry = response.headers.get("Retry-After");
      // the server's messages end without a full stop: one before the hint
      const stop = /[.!?…]$/.test(message) ? "" : ".";
      const suffix = retry && response.status !== 401 ? `${stop} Retry in ${retry} s.` : "";
      throw new ApiError(response.status, code, message + suffix);
    }
    return data;
  }

  // "en" -> "English" (the browser's own names, for lists that carry codes only).
  let names = null;
  function languageName(code) {
    try {
      names = names || new Intl.DisplayNames(["en"], { type: "language" });
      return names.of(code) || code;
    } catch {
      return code;
    }
  }

  function capitalise(text) {
    return text ? text[0].toUpperCase() + text.slice(1) : text;
  }

  // Seconds as a person reads them: "< 1 ms", "37 ms", "1.25 s".
  function seconds(v) {
    if (v === null || v === undefined) return "–";
    if (v < 0.001) return "< 1 ms";
    return v < 1 ? `${Math.round(v * 1000)} ms` : `${v.toFixed(2)} s`;
  }

  return { ApiError, request, key, setKey, languageName, capitalise, seconds };
})();

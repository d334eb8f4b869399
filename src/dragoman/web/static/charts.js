// A small line chart on a canvas, written for the dashboard: time on x (the last `span`
// seconds), one or more series on y from 0 (or a fixed max), gaps where a value is null or
// where points are missing (the server was unreachable).
"use strict";

const GAP_SECONDS = 3;  // points come a second apart: a longer silence is drawn as a gap

class LineChart {
  constructor(canvas, legend, { series, span = 120, max = null, unit = "", digits = 1 }) {
    this.canvas = canvas;
    this.legend = legend;
    this.series = series;  // [{label, color, get: (point) => number|null, dash?}]
    this.span = span;
    this.max = max;
    this.unit = unit;
    this.digits = digits;
  }

  setSeries(series) {
    this.series = series;
  }

  format(v) {
    if (v === null || v === undefined || Number.isNaN(v)) return "–";
    const abs = Math.abs(v);
    if (abs >= 100 || v === 0) return v.toFixed(0) + this.unit;
    if (abs >= 10) return v.toFixed(Math.min(1, this.digits)) + this.unit;
    if (abs >= 1) return v.toFixed(this.digits) + this.unit;
    return Number(v.toPrecision(2)) + this.unit;  // 0.025, 0.5
  }

  // An axis label: a quarter of a whole-number top (1.5 of 6) keeps its fraction.
  tick(v) {
    if (Math.abs(v) >= 100 || v === 0) return v.toFixed(0) + this.unit;
    return Number(v.toPrecision(3)) + this.unit;
  }

  // A "nice" top for the y axis (1, 2, 4, 6 or 8 times a power of ten: quarters read well).
  static niceTop(value) {
    if (!(value > 0)) return 1;
    const p = 10 ** Math.floor(Math.log10(value));
    for (const m of [1, 2, 4, 6, 8, 10]) if (m * p >= value) return m * p;
    return 10 * p;
  }

  draw(points) {
    const c = this.canvas;
    const ratio = window.devicePixelRatio || 1;
    const w = c.clientWidth, h = c.clientHeight;
    if (c.width !== Math.round(w * ratio) || c.height !== Math.round(h * ratio)) {
      c.width = Math.round(w * ratio);
      c.height = Math.round(h * ratio);
    }
    const g = c.getContext("2d");
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, w, h);
    const ink = getComputedStyle(c).color;
    const left = 52, right = 8, top = 8, bottom = 20;
    const pw = w - left - right, ph = h - top - bottom;
    const now = points.length ? points[points.length - 1].t : Date.now() / 1000;
    const shown = points.filter((p) => p.t >= now - this.span);

    let largest = 0;
    for (const s of this.series) {
      for (const p of shown) {
        const v = s.get(p);
        if (v !== null && v !== undefined && v > largest) largest = v;
      }
    }
    const yMax = this.max ?? LineChart.niceTop(largest);
    const x = (t) => left + pw * (1 - (now - t) / this.span);
    const y = (v) => top + ph * (1 - Math.min(v, yMax) / yMax);

    // Grid and axes.
    g.font = "11px system-ui, sans-serif";
    g.fillStyle = ink;
    g.strokeStyle = ink;
    g.globalAlpha = 0.25;
    g.lineWidth = 1;
    g.textAlign = "right";
    g.textBaseline = "middle";
    const ticks = [];
    for (let i = 0; i <= 4; i++) {
      const v = (yMax * i) / 4, yy = Math.round(y(v)) + 0.5;
      g.globalAlpha = 0.2;
      g.beginPath(); g.moveTo(left, yy); g.lineTo(left + pw, yy); g.stroke();
      g.globalAlpha = 0.9;
      ticks.push(this.tick(v));
      g.fillText(ticks[i], left - 6, yy);
    }
    g.textAlign = "center";
    g.textBaseline = "top";
    for (let s = 0; s <= this.span; s += this.span / 4) {
      g.textAlign = s === 0 ? "right" : "center";
      g.fillText(s === 0 ? "now" : `-${s} s`, x(now - s), top + ph + 5);
    }
    g.globalAlpha = 1;

    // Lines; a null value or missing points break the line.
    g.lineJoin = "round";
    let runs = 0;
    for (const s of this.series) {
      g.strokeStyle = s.color;
      g.lineWidth = s.width || 2;
      g.setLineDash(s.dash || []);
      g.beginPath();
      let pen = false, before = null;
      for (const p of shown) {
        const v = s.get(p);
        if (before !== null && p.t - before > GAP_SECONDS) pen = false;
        before = p.t;
        if (v === null || v === undefined) { pen = false; continue; }
        if (pen) g.lineTo(x(p.t), y(v)); else { g.moveTo(x(p.t), y(v)); runs += 1; }
        pen = true;
      }
      g.stroke();
    }
    g.setLineDash([]);

    // Legend with the latest values; the same summary for screen readers and for tests.
    const last = shown.length ? shown[shown.length - 1] : null;
    const values = this.series.map((s) => (last ? s.get(last) : null));
    this.legend.replaceChildren(...this.series.map((s, i) => {
      const item = document.createElement("span");
      item.style.setProperty("--swatch", s.color);
      const b = document.createElement("b");
      b.textContent = this.format(values[i]);
      item.append(`${s.label} `, b);
      return item;
    }));
    c.setAttribute("aria-label", this.series.map((s, i) => `${s.label} ${this.format(values[i])}`).join(", "));
    c.dataset.points = String(shown.length);
    c.dataset.max = String(largest);
    c.dataset.ticks = ticks.join(" ");
    c.dataset.runs = String(runs);  // unbroken stretches of line, all series together
  }
}

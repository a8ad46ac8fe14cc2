// Live event-stream rates: counters read from /metrics every few seconds, turned into per-second rates, drawn as
// small SVG area charts over the last minutes. Hand-drawn SVG: no chart library to ship or to keep patched.

import { parseMetrics, sum, text } from './api.js';
import { h, rate, fmt } from './dom.js';

export const POLL_MS = 2000;
/** the shortest and the longest refresh period an address may ask for: a page must not flood its server */
const REFRESH_BOUNDS_MS = [250, 3_600_000];

/**
 * The refresh period in ms for a page address's query string: ?refresh= in seconds (decimals allowed: a wall display
 * may want 30, someone watching a replay 0.5), kept within 0.25 s and an hour; POLL_MS without one, or when it is
 * not a number.
 */
export function refreshMs(search) {
  const given = new URLSearchParams(search).get('refresh');
  const seconds = given === null || given.trim() === '' ? NaN : Number(given);
  if (!Number.isFinite(seconds)) return POLL_MS;
  return Math.min(REFRESH_BOUNDS_MS[1], Math.max(REFRESH_BOUNDS_MS[0], Math.round(seconds * 1000)));
}

const WINDOW_MS = 5 * 60 * 1000;
const SVG = 'http://www.w3.org/2000/svg';

const notOk = (l) => l.status !== 'ok';

/** What each chart counts, from the exposition (docs/operations.md, "Web console"). */
export const SERIES = [
  { id: 'applied', title: 'Applied events', unit: 'events/s',
    read: (s) => sum(s, 'dynamo_kvrouter_kv_cache_events_applied', (l) => l.status === 'ok') },
  { id: 'gaps', title: 'Sequence gaps', unit: 'gaps/s',
    read: (s) => sum(s, 'dynamo_kvindexer_sequence_gaps_total') },
  { id: 'replays', title: 'Replays', unit: 'replays/s',
    read: (s) => sum(s, 'dynamo_kvindexer_replays_total') },
  { id: 'decode', title: 'Decode errors', unit: 'errors/s',
    read: (s) => sum(s, 'dynamo_kvindexer_decode_errors_total') },
  { id: 'warnings', title: 'Warnings', unit: 'warnings/s',
    read: (s) => sum(s, 'dynamo_kvrouter_kv_cache_events_applied', notOk)
      + sum(s, 'dynamo_kvindexer_unknown_events_total') + sum(s, 'dynamo_kvindexer_malformed_frames_total') },
];

const history = [];   // [{t, totals: {id: value}}]
const charts = new Map();
let samples = 0;

export function mountCharts(container) {
  for (const s of SERIES) {
    const svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('viewBox', '0 0 200 48');
    svg.setAttribute('preserveAspectRatio', 'none');
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', `${s.title} over the last 5 minutes`);
    const base = document.createElementNS(SVG, 'path');
    base.setAttribute('class', 'base');
    base.setAttribute('d', 'M0,47.5L200,47.5');
    const area = document.createElementNS(SVG, 'path');
    area.setAttribute('class', 'area');
    const line = document.createElementNS(SVG, 'path');
    line.setAttribute('class', 'line');
    svg.append(base, area, line);
    const value = h('span', { class: 'chart-value' }, '–');
    const total = h('span', { class: 'chart-total' }, '');
    const card = h('figure', { class: `chart ${s.id}`, id: `chart-${s.id}`, dataset: { series: s.id } },
      h('figcaption', {}, h('span', { class: 'chart-title' }, s.title), value),
      svg, h('div', { class: 'chart-foot' }, h('span', {}, s.unit), total));
    container.append(card);
    charts.set(s.id, { card, area, line, value, total });
  }
}

/** One /metrics read, returned parsed; safe to call on a timer (a failed read leaves a hole, not an error). */
export async function pollMetrics() {
  const now = Date.now();
  const parsed = parseMetrics(await text('/metrics'));
  const totals = {};
  for (const s of SERIES) totals[s.id] = s.read(parsed);
  history.push({ t: now, totals });
  while (history.length > 2 && history[0].t < now - WINDOW_MS) history.shift();
  samples++;
  draw();
  return parsed;
}

function rates(id) {
  const out = [];
  for (let i = 1; i < history.length; i++) {
    const a = history[i - 1];
    const b = history[i];
    const dt = (b.t - a.t) / 1000;
    // a sum over live indexes drops when an index goes away: treat it as a reset, not a negative rate
    const d = Math.max(0, b.totals[id] - a.totals[id]);
    out.push({ t: b.t, r: dt > 0 ? d / dt : 0 });
  }
  return out;
}

function draw() {
  const now = Date.now();
  for (const s of SERIES) {
    const c = charts.get(s.id);
    if (!c) continue;
    const points = rates(s.id);
    const last = points.length ? points[points.length - 1].r : NaN;
    const max = Math.max(1e-9, ...points.map((p) => p.r));
    const x = (t) => 200 - ((now - t) / WINDOW_MS) * 200;
    const y = (r) => 46 - (r / max) * 42;
    let d = '';
    points.forEach((p, i) => { d += `${i ? 'L' : 'M'}${x(p.t).toFixed(1)},${y(p.r).toFixed(1)}`; });
    c.line.setAttribute('d', d);
    c.area.setAttribute('d', points.length
      ? `${d}L${x(points[points.length - 1].t).toFixed(1)},48L${x(points[0].t).toFixed(1)},48Z` : '');
    c.value.textContent = rate(last);
    const total = history.length ? history[history.length - 1].totals[s.id] : 0;
    c.total.textContent = `total ${fmt(total)}`;
    c.card.dataset.rate = Number.isFinite(last) ? String(last) : '';
    c.card.dataset.total = String(total);
    c.card.dataset.samples = String(samples);
    c.card.classList.toggle('alert', s.id !== 'applied' && last > 0);
  }
}

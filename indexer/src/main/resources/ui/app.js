// The console's entry point: the address picks the view (#overview, #query?…, #cache?…); one timer refreshes
// readiness, the event-rate charts and the visible view every few seconds.

import { json } from './api.js';
import { mountCharts, pollMetrics, POLL_MS } from './charts.js';
import { renderExpiry } from './expiry.js';
import { renderProcess } from './process.js';
import { refreshOverview, refreshReady } from './overview.js';
import { setupQuery, showQuery, updateIndexes } from './query.js';
import { setupCache, showCache, refreshCache } from './cachemap.js';

const VIEWS = ['overview', 'query', 'cache'];
const CACHE_EVERY = 3; // ticks: the cache map walks the index, so it refreshes less often

let view = null;
let tick = 0;
let timer = null;

function parseHash() {
  const raw = location.hash.replace(/^#/, '');
  const at = raw.indexOf('?');
  const name = at < 0 ? raw : raw.slice(0, at);
  return { name: VIEWS.includes(name) ? name : 'overview', params: new URLSearchParams(at < 0 ? '' : raw.slice(at + 1)) };
}

async function indexes() {
  const stats = await json('/stats?workers=false'); // the cheap form: the pickers need names only
  return stats.indexes || [];
}

async function route() {
  const { name, params } = parseHash();
  view = name;
  for (const v of VIEWS) document.getElementById(`view-${v}`).hidden = v !== name;
  document.querySelectorAll('nav a').forEach((a) => {
    if (a.dataset.view === name) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  });
  document.title = `kv-indexer · ${{ overview: 'Overview', query: 'Query', cache: 'Cache map' }[name]}`;
  await guarded(async () => {
    if (name === 'overview') await refreshOverview();
    else if (name === 'query') showQuery(params, await indexes());
    else await showCache(params, await indexes());
  });
}

async function refresh() {
  tick++;
  await guarded(async () => {
    const work = [refreshReady(), pollMetrics().then((samples) => {
      renderExpiry(samples);
      renderProcess(samples);
    })];
    if (view === 'overview') work.push(refreshOverview());
    if (view === 'query' && tick % CACHE_EVERY === 0) work.push(indexes().then(updateIndexes));
    if (view === 'cache' && tick % CACHE_EVERY === 0) work.push(refreshCache());
    await Promise.all(work);
  });
  timer = setTimeout(refresh, POLL_MS); // after the previous round ended: rounds never pile up on a slow server
}

/** Runs a step; a failure shows in the banner (and clears on the next success) instead of the console. */
async function guarded(step) {
  const banner = document.getElementById('banner');
  try {
    await step();
    banner.hidden = true;
    document.body.dataset.updated = String(Date.now());
  } catch (e) {
    banner.textContent = `Could not reach the indexer: ${e.message}`;
    banner.hidden = false;
  }
}

window.addEventListener('hashchange', route);
window.addEventListener('DOMContentLoaded', async () => {
  mountCharts(document.getElementById('charts'));
  setupQuery();
  setupCache();
  await route();
  if (timer === null) refresh();
});

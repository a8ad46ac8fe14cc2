// The console's entry point: the address picks the view (#overview, #query?…, #cache?…); one timer refreshes
// readiness, the event-rate charts and the visible view every few seconds (2 s, or the address's ?refresh=).

import { json, ApiError } from './api.js';
import { clock } from './dom.js';
import { mountCharts, pollMetrics, refreshMs } from './charts.js';
import { renderExpiry } from './expiry.js';
import { renderProcess } from './process.js';
import { refreshOverview, refreshReady } from './overview.js';
import { setupQuery, showQuery, updateIndexes } from './query.js';
import { setupCache, showCache, refreshCache, updateCacheIndexes } from './cachemap.js';

const VIEWS = ['overview', 'query', 'cache'];
const CACHE_EVERY = 3; // ticks: the cache map walks the index, so it refreshes less often
const PERIOD_MS = refreshMs(location.search);

let view = null;
let tick = 0;
let timer = null;
let unreachableSince = null; // when a refresh first failed to reach the server, until one reaches it again

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
    if (name === 'overview') {
      // readiness first: empty tables say why by it; a failure of its own the timed refresh reports
      await refreshReady().catch(() => {});
      await refreshOverview();
    } else if (name === 'query') {
      showQuery(params, await indexes());
    } else {
      await showCache(params, await indexes());
    }
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
    if (view === 'cache' && tick % CACHE_EVERY === 0) work.push(indexes().then(updateCacheIndexes).then(refreshCache));
    await Promise.all(work);
  });
  timer = setTimeout(refresh, PERIOD_MS); // after the previous round ended: rounds never pile up on a slow server
}

/**
 * Runs a step; a failure shows in the banner (and clears on the next success) instead of the console. A request that
 * gets no answer at all (the server is down, the network broke) marks the page unreachable: readiness says so and
 * the live figures are dimmed with the time they were last updated, until a step reaches the server again.
 */
async function guarded(step) {
  const banner = document.getElementById('banner');
  try {
    await step();
    banner.hidden = true;
    document.body.dataset.updated = String(Date.now());
    if (unreachableSince !== null) {
      unreachableSince = null;
      showStale(false);
    }
  } catch (e) {
    if (e instanceof ApiError) {
      banner.textContent = `The indexer answered with an error: ${e.message}`;
    } else { // fetch itself failed: no answer
      unreachableSince ??= Date.now();
      const at = new URL('..', location.href).href;
      banner.textContent = `The indexer at ${at} does not answer (since ${clock(unreachableSince)}); `
        + 'showing what it said last';
      showStale(true);
    }
    banner.hidden = false;
  }
}

/** Readiness "unreachable" and the live figures dimmed, each with the time of the last answer; or back to normal. */
function showStale(stale) {
  document.body.classList.toggle('stale', stale);
  const updated = Number(document.body.dataset.updated);
  const note = updated ? `last updated ${clock(updated)}` : 'never updated';
  document.querySelectorAll('.stale-note').forEach((n) => {
    n.hidden = !stale;
    n.textContent = stale ? ` ${note}` : '';
  });
  const ready = document.getElementById('ready');
  if (stale) {
    ready.dataset.ready = 'unreachable';
    ready.querySelector('.text').textContent = 'unreachable';
    ready.querySelector('.reason').hidden = true; // the reason is the server's, and it does not answer
    ready.title = `no answer from the indexer; ${note}`;
  }
}

window.addEventListener('hashchange', route);
// the address names the view: following #main would leave it for the Overview, so the skip link only moves the focus
document.querySelector('.skip').addEventListener('click', (e) => {
  e.preventDefault();
  document.getElementById('main').focus();
});
window.addEventListener('DOMContentLoaded', async () => {
  mountCharts(document.getElementById('charts'));
  setupQuery();
  setupCache();
  await route();
  if (timer === null) refresh();
});

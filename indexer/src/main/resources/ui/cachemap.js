// Cache map: blocks each worker holds per tier (/stats) and the most shared prefixes (/prefixes, bearer token when
// auth is on) of one (model, tenant).

import { json, allowTokenPrompt } from './api.js';
import { h, sync, fmt, worker } from './dom.js';
import { fillPickers, fillTenants } from './pickers.js';

const TIERS = ['device', 'host_pinned', 'disk', 'external'];
const LIMIT = 20;

let indexes = [];

export function setupCache() {
  const model = document.getElementById('c-model');
  const tenant = document.getElementById('c-tenant');
  const go = () => {
    location.hash = `#cache?${new URLSearchParams({ model_name: model.value, tenant_id: tenant.value })}`;
  };
  model.addEventListener('change', () => {
    fillTenants(tenant, indexes, model.value);
    go();
  });
  tenant.addEventListener('change', go);
  document.getElementById('cache-form').addEventListener('submit', (e) => e.preventDefault());
}

export async function showCache(params, knownIndexes) {
  indexes = knownIndexes;
  const model = document.getElementById('c-model');
  const tenant = document.getElementById('c-tenant');
  fillPickers(model, tenant, indexes, {
    model_name: params.get('model_name') ?? (model.value || undefined),
    tenant_id: params.get('tenant_id') ?? (tenant.value || undefined),
  });
  await refreshCache();
}

/** Called on the timed refreshes with the latest index list: a (model, tenant) registered since joins the pickers. */
export function updateCacheIndexes(knownIndexes) {
  indexes = knownIndexes;
  const model = document.getElementById('c-model');
  const tenant = document.getElementById('c-tenant');
  fillPickers(model, tenant, indexes, { model_name: model.value || undefined, tenant_id: tenant.value || undefined });
}

/**
 * The (model, tenant) picked, as the query string of its requests; '' when there is no index to pick. The empty
 * name is a model name like any other (as in Dynamo): only a picker without choices means none.
 */
function picked() {
  const model = document.getElementById('c-model');
  const tenant = document.getElementById('c-tenant').value;
  return model.options.length ? String(new URLSearchParams({ model_name: model.value, tenant_id: tenant })) : '';
}

export async function refreshCache() {
  const q = picked();
  const workersBox = document.getElementById('c-workers');
  const prefixBox = document.getElementById('c-prefixes');
  if (!q) {
    sync(workersBox, h('p', { class: 'empty' }, 'No index yet.'));
    sync(prefixBox);
    return;
  }
  loadPrefixes(prefixBox, q);
  const stats = await json(`/stats?${q}`);
  renderWorkers(workersBox, (stats.indexes || [])[0]);
}

let prefixesFor = null; // the query string whose /prefixes is out, until it is answered

/**
 * Draws the most shared prefixes when they come, one request at a time. Not awaited by the refresh: /prefixes may
 * open the token dialog, and readiness, the charts and the blocks per worker keep refreshing while it is open.
 */
function loadPrefixes(box, q) {
  if (prefixesFor !== null) {
    if (prefixesFor !== q) sync(box, h('p', { class: 'empty' }, 'Loading…')); // not the last index's, meanwhile
    return;
  }
  prefixesFor = q;
  json(`/prefixes?${q}&limit=${LIMIT}`)
    .then((prefixes) => picked() === q && renderPrefixes(box, prefixes),
      (e) => picked() === q && prefixError(box, e))
    .finally(() => {
      prefixesFor = null;
      if (picked() && picked() !== q) loadPrefixes(box, picked()); // the pickers moved on while it was out
    });
}

function prefixError(box, e) {
  const retry = e.status === 401 ? h('button', { type: 'button', class: 'secondary', onclick: () => {
    allowTokenPrompt();
    refreshCache().catch(() => {}); // the next timed refresh shows a lasting failure
  } }, 'Enter token') : null;
  // in place: a focused "Enter token" stays focused (its listener does the same in every box drawn)
  sync(box, h('p', { class: 'error-box', role: 'alert' }, `${e.status || ''} ${e.message} `, retry));
}

function renderWorkers(box, ix) {
  if (!ix || !ix.workers.length) {
    sync(box, h('p', { class: 'empty' }, ix ? 'No worker holds a block.' : 'No such index.'));
    return;
  }
  const max = Math.max(1, ...ix.workers.map((w) => TIERS.reduce((s, t) => s + (w.blocks[t] || 0), 0)));
  sync(box,
    h('p', { class: 'legend' }, TIERS.map((t) => h('span', { class: `key ${t}` }, t.replace('_', ' '))),
      h('span', { class: 'hint' }, ` ${fmt(ix.blocks)} distinct blocks, ${fmt(ix.memberships)} memberships`)),
    h('div', { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': 'Blocks per worker' },
      h('table', { id: 'worker-blocks' },
        h('thead', {}, h('tr', {}, h('th', {}, 'Worker'), TIERS.map((t) => h('th', { class: 'num' }, t.replace('_', ' '))),
          h('th', { class: 'spread' }, 'Spread'))),
        h('tbody', {}, ix.workers.map((w) => {
          const total = TIERS.reduce((s, t) => s + (w.blocks[t] || 0), 0);
          const id = worker(w.instance_id, w.dp_rank);
          return h('tr', { dataset: { key: id, worker: id } },
            h('td', { class: 'id' }, id),
            TIERS.map((t) => h('td', { class: 'num', dataset: { tier: t } }, fmt(w.blocks[t] || 0))),
            h('td', { class: 'spread' }, h('span', { class: 'stack', role: 'img',
              'aria-label': `${fmt(total)} blocks` }, TIERS.map((t) => h('span', {
              class: `seg ${t}`, style: `width:${((100 * (w.blocks[t] || 0)) / max).toFixed(1)}%` })))));
        })))));
}

function renderPrefixes(box, data) {
  const list = data.prefixes || [];
  if (!list.length) {
    sync(box, h('p', { class: 'empty' }, 'No block is held yet.'));
    return;
  }
  const maxDepth = Math.max(1, ...list.map((p) => p.depth));
  sync(box, h('div', { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': 'Most shared prefixes' },
    h('table', { id: 'prefixes' },
      h('thead', {}, h('tr', {}, h('th', { class: 'num' }, 'Workers'), h('th', { class: 'num' }, 'Depth (blocks)'),
        h('th', { class: 'num' }, 'Tokens'), h('th', { class: 'spread' }, 'Depth'), h('th', {}, 'Held by'),
        h('th', {}, 'Last block hash'))),
      h('tbody', {}, list.map((p) => h('tr', { dataset: { key: String(p.block_hash), depth: String(p.depth),
        workers: String(p.workers) } },
        h('td', { class: 'num' }, fmt(p.workers)),
        h('td', { class: 'num' }, fmt(p.depth)),
        h('td', { class: 'num' }, fmt(p.tokens)),
        h('td', { class: 'spread' }, h('span', { class: 'stack' }, h('span', { class: 'seg device',
          style: `width:${((100 * p.depth) / maxDepth).toFixed(1)}%` }))),
        h('td', { class: 'holders' }, p.holders.map((w) => worker(w.instance_id, w.dp_rank)).join(', ')
          + (p.workers > p.holders.length ? ` +${p.workers - p.holders.length}` : '')),
        h('td', { class: 'mono' }, String(p.block_hash))))))));
}

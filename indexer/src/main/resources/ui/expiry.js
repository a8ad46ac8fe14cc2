// Block expiry card (overview): the --block-ttl / --max-blocks-per-worker bounds and how many blocks each removed,
// per tier, read from the same /metrics sample as the charts (the series exist only when a bound is set).

import { h, sync, fmt } from './dom.js';

const TIERS = ['device', 'host_pinned', 'disk', 'external'];
let shown = null;

/** Redraws the card from parsed /metrics samples ([{name, labels, value}]) when its figures changed. */
export function renderExpiry(samples) {
  const ttl = {};
  const expired = {};
  let cap = 0;
  let bounded = false;
  for (const s of samples) {
    if (s.name === 'dynamo_kvindexer_block_ttl_seconds') {
      ttl[s.labels.tier] = s.value;
      bounded = true;
    } else if (s.name === 'dynamo_kvindexer_max_blocks_per_worker') {
      cap = s.value;
      bounded = true;
    } else if (s.name === 'dynamo_kvindexer_blocks_expired_total') {
      expired[`${s.labels.tier}/${s.labels.reason}`] = s.value;
    }
  }
  const text = JSON.stringify({ ttl, expired, cap, bounded });
  if (text === shown) return;
  shown = text;
  const card = document.getElementById('expiry');
  if (!bounded) {
    sync(card, h('p', { class: 'empty' },
      'No bound: blocks stay until their engine removes them (--block-ttl, --max-blocks-per-worker).'));
    return;
  }
  const rows = TIERS.filter((t) => t in ttl || cap > 0).map((t) => h('tr', { dataset: { tier: t } },
    h('td', {}, t),
    h('td', { class: 'num', dataset: { field: 'ttl' } }, t in ttl ? duration(ttl[t]) : '–'),
    h('td', { class: 'num', dataset: { field: 'ttl-expired' } }, fmt(expired[`${t}/ttl`] || 0)),
    h('td', { class: 'num', dataset: { field: 'capacity-evicted' } }, fmt(expired[`${t}/capacity`] || 0))));
  sync(card,
    h('p', { class: 'hint', dataset: { field: 'cap' } }, cap > 0
      ? `At most ${fmt(cap)} blocks per worker and tier; above it the oldest-stored go, down to 90 %.`
      : 'No per-worker cap.'),
    h('div', { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': 'Block expiry' },
      h('table', {},
        h('thead', {}, h('tr', {}, h('th', {}, 'Tier'), h('th', { class: 'num' }, 'TTL'),
          h('th', { class: 'num', title: 'blocks not stored again within the TTL' }, 'Expired'),
          h('th', { class: 'num', title: 'oldest-stored blocks of a worker over the cap' }, 'Evicted'))),
        h('tbody', {}, rows))));
}

/** Seconds as the flag spells them: 500ms, 30s, 10m, 6h. */
function duration(seconds) {
  const ms = Math.round(seconds * 1000);
  if (ms % 3600000 === 0) return `${ms / 3600000}h`;
  if (ms % 60000 === 0) return `${ms / 60000}m`;
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

// Overview: indexes, workers with their listeners, peers. Readiness lives in the header (every view shows it).

import { json } from './api.js';
import { h, sync, fmt, statusBadge, stamp, natural } from './dom.js';

/** /ready's reason while the replica loads its state: its tables are empty because they are not loaded yet */
let loading = false;

export async function refreshReady() {
  const ready = await json('/ready');
  const node = document.getElementById('ready');
  const reason = ready && ready.reason ? String(ready.reason) : '';
  loading = reason === 'recovering_from_peer';
  node.dataset.ready = String(Boolean(ready && ready.ready));
  node.querySelector('.text').textContent = readiness(reason, Boolean(ready && ready.ready));
  // the code as /ready and the docs spell it, to search for; "ready" needs no explaining
  const code = node.querySelector('.reason');
  code.textContent = reason;
  code.hidden = !reason || reason === 'ready';
  node.removeAttribute('title');
}

/** What each /ready reason means, in words (the codes: StartupGate, and GET /ready in docs/api.md). */
const REASONS = {
  ready: 'ready',
  recovering_from_peer: 'not ready: loading the index from a peer or its own snapshot',
  waiting_for_min_initial_workers: 'not ready: waiting for the minimum number of workers to register',
  shutting_down: 'shutting down: still answers queries, but asks to be taken out of rotation',
};

/** A readiness reason in words; a code this console does not know yet, as it is. */
export function readiness(reason, ready) {
  return REASONS[reason] ?? (ready ? 'ready' : `not ready${reason ? '' : ': no answer'}`);
}

const shown = {};

/** Redraws a part only when its data changed, and then in place (sync): focus and a selection stay where they are. */
function changed(part, data) {
  const text = JSON.stringify(data);
  if (shown[part] === text) return false;
  shown[part] = text;
  return true;
}

export async function refreshOverview() {
  const [stats, workers, peers] = await Promise.all([json('/stats?workers=false'), json('/workers'), json('/peers')]);
  const indexes = (stats.indexes || []).map((ix) => ({ ...ix, instances: (workers || []).filter((w) =>
    w.model_name === ix.model_name && w.tenant_id === ix.tenant_id).length }))
    .sort((a, b) => natural(a.model_name, b.model_name) || natural(a.tenant_id, b.tenant_id));
  if (changed('indexes', [indexes, loading])) renderIndexes(indexes);
  if (changed('workers', [workers, loading])) renderWorkers(workers || []);
  if (changed('peers', peers)) renderPeers(peers || []);
}

/** Why the tables are empty while the replica recovers: not lost registrations, nothing to register again. */
const LOADING = 'None yet: this replica is still loading its state from a peer or its snapshot (recovering_from_peer).';

function renderIndexes(indexes) {
  const body = document.querySelector('#indexes tbody');
  if (!indexes.length) {
    sync(body, h('tr', {}, h('td', { colspan: 7, class: 'empty' },
      loading ? LOADING : 'No index yet: register a worker.')));
    return;
  }
  sync(body, indexes.map((ix) => {
    const q = new URLSearchParams({ model_name: ix.model_name, tenant_id: ix.tenant_id });
    return h('tr', { dataset: { key: JSON.stringify([ix.model_name, ix.tenant_id]), model: ix.model_name,
      tenant: ix.tenant_id } },
      h('td', { class: 'name' }, ix.model_name), h('td', { class: 'name' }, ix.tenant_id),
      h('td', { class: 'num' }, fmt(ix.block_size)),
      h('td', { class: 'num', dataset: { field: 'blocks' } }, fmt(ix.blocks)),
      h('td', { class: 'num', dataset: { field: 'memberships' } }, fmt(ix.memberships)),
      h('td', { class: 'num' }, fmt(ix.instances)),
      h('td', { class: 'links' }, h('a', { href: `#cache?${q}` }, 'cache map'), ' ',
        h('a', { href: `#query?${q}` }, 'query')));
  }));
}

function renderWorkers(workers) {
  const body = document.querySelector('#workers tbody');
  if (!workers.length) {
    sync(body, h('tr', {}, h('td', { colspan: 7, class: 'empty' },
      loading ? LOADING : 'No worker registered.')));
    return;
  }
  const rows = [];
  const sorted = [...workers].sort((a, b) => compareIds(a.instance_id, b.instance_id)
    || natural(a.model_name, b.model_name) || natural(a.tenant_id, b.tenant_id));
  for (const w of sorted) {
    const ranks = Object.keys(w.listeners || w.endpoints || {}).sort((a, b) => Number(a) - Number(b));
    ranks.forEach((rank, i) => {
      const l = (w.listeners || {})[rank] || { endpoint: (w.endpoints || {})[rank], status: w.status };
      const first = i === 0;
      const down = l.disconnected_since_ms != null;
      const connection = down ? 'disconnected' : l.connected ? 'connected' : 'not-connected';
      rows.push(h('tr', { class: first ? 'first' : 'more',
        dataset: { key: JSON.stringify([String(w.instance_id), w.model_name, w.tenant_id, rank]),
          instance: String(w.instance_id), rank, status: l.status, connection, exactness: l.exactness || '',
          lastSeq: String(l.last_seq ?? '') } },
        h('td', { class: 'id' }, first ? String(w.instance_id) : '', first && w.pod_name ? h('small', {}, ` ${w.pod_name}`) : null),
        h('td', { class: 'num' }, rank),
        h('td', { class: 'name' }, first ? `${w.model_name} / ${w.tenant_id}` : ''),
        h('td', { class: 'mono' }, l.endpoint || ''),
        h('td', { class: 'listener' },
          h('span', { class: 'badges' }, statusBadge(l.status || 'unknown'), exactnessBadge(l),
            down ? disconnectedBadge(l) : notConnectedBadge(l), silentBadge(l)),
          exactnessNote(l), down ? disconnectedNote(l) : null, silentNote(l)),
        h('td', { class: 'batch', dataset: { field: 'last-batch' } }, lastBatch(l)),
        l.last_error ? h('td', { class: 'error' }, l.last_error)
          : h('td', { class: 'error connect' }, l.connect_error || '')));
    });
  }
  sync(body, rows);
}

/**
 * How complete the index is for this stream: exact, replaying (a gap is being replayed) or degraded (batches lost;
 * the index may under-report this worker for a while). The reason and since when are in the note below it.
 */
function exactnessBadge(listener) {
  const state = listener.exactness;
  if (!state) {
    return null; // an indexer that does not report it
  }
  return [' ', h('span', { class: `badge exactness ${state}`,
    dataset: { exactness: state, since: String(listener.exactness_since_ms ?? '') } }, state)];
}

/**
 * Why a stream is not exact and since when, as text under the badges: a tooltip would be out of reach of the
 * keyboard and of touch.
 */
function exactnessNote(listener) {
  const state = listener.exactness;
  if (!state || state === 'exact') {
    return null;
  }
  return h('small', { class: 'note', dataset: { field: 'exactness' } }, state,
    listener.exactness_since_ms != null ? [' since ', stamp(listener.exactness_since_ms)] : null,
    listener.exactness_reason ? `: ${listener.exactness_reason}` : null);
}

/** The last batch applied: its seq and when; a restored seq has none applied by this replica yet. */
function lastBatch(listener) {
  if (listener.last_seq == null) {
    return h('span', { class: 'empty' }, 'none yet');
  }
  return [`seq ${listener.last_seq}`, listener.last_batch_ms != null ? [' at ', stamp(listener.last_batch_ms)]
    : h('span', { class: 'empty' }, ' (restored; none applied here yet)')];
}

/**
 * Connected, but not one batch: the usual sign of an engine that does not publish where it was registered (KV events
 * off, or its replay port registered as its PUB port).
 */
function silentBadge(listener) {
  if (!listener.connected || listener.last_seq != null) {
    return null;
  }
  return [' ', h('span', { class: 'badge silent' }, 'no events')];
}

function silentNote(listener) {
  if (!listener.connected || listener.last_seq != null) {
    return null;
  }
  return h('small', { class: 'note', dataset: { field: 'silent' } },
    'connected, but no batch yet: are its KV events on, and is this its PUB endpoint (not its replay endpoint)?');
}

/** The SUB connection to the engine is down: Dynamo's status alone cannot say so (the socket reconnects itself). */
function disconnectedBadge(listener) {
  return [' ', h('span', { class: 'badge disconnected', dataset: { since: String(listener.disconnected_since_ms) } },
    'disconnected')];
}

function disconnectedNote(listener) {
  return h('small', { class: 'note', dataset: { field: 'disconnected' } }, 'engine connection down since ',
    stamp(listener.disconnected_since_ms));
}

/**
 * The SUB socket is trying but has never completed a handshake (a wrong endpoint, the engine not up yet): its
 * status says pending until it first connects. Paused and failed listeners have no socket; their status says so.
 */
function notConnectedBadge(listener) {
  if (listener.connected !== false || !['active', 'pending'].includes(listener.status)) {
    return null;
  }
  return [' ', h('span', { class: 'badge not-connected',
    title: `no connection to the engine yet${listener.connect_error ? `: ${listener.connect_error}` : ''}` },
  'not connected')];
}

function renderPeers(peers) {
  const list = document.getElementById('peers');
  sync(list, peers.length ? peers.map((p) => h('li', { class: 'mono', dataset: { key: p } }, p))
    : h('li', { class: 'empty' }, 'No peers (this replica recovers from none).'));
}

/** Orders u64 ids given as numbers or decimal strings. */
export function compareIds(a, b) {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

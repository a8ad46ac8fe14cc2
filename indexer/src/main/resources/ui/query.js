// Query: token ids or local block hashes → /query or /query_by_hash, drawn per instance, dp rank and tier. The query
// lives in the page address (#query?model_name=M&tenant_id=T&token_ids=1,2,3 or block_hashes=…, and is_eagle=true for
// token ids hashed in EAGLE windows) and runs on load.

import { json } from './api.js';
import { h, replace, fmt, bar } from './dom.js';
import { fillPickers, fillTenants } from './pickers.js';
import { compareIds } from './overview.js';

const U32_MAX = 4294967295n;
const U64_MAX = 18446744073709551615n;

let indexes = [];
let lastRun = '';
let resultFor = null; // the model and tenant the results on show are for

export function setupQuery() {
  const form = document.getElementById('query-form');
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const params = formParams();
    const hash = `#query?${readable(params)}`;
    if (location.hash === hash) run(params); // same address: no hashchange, run again on purpose
    else location.hash = hash;
  });
  form.querySelectorAll('input[name=kind]').forEach((r) => r.addEventListener('change', labelInput));
  document.getElementById('q-eagle').addEventListener('change', labelInput);
  document.getElementById('q-model').addEventListener('change', (e) =>
    fillTenants(document.getElementById('q-tenant'), indexes, e.target.value));
}

/** Shows the view for the address's parameters; runs the query they name (once per distinct address). */
export function showQuery(params, knownIndexes) {
  indexes = knownIndexes;
  const kind = params.has('block_hashes') ? 'block_hashes' : 'token_ids';
  // an address that names a model or a query means tenant 'default' when it names none, as run() does; only the
  // bare #query keeps what the pickers had
  const named = params.has('model_name') || params.has(kind);
  fillPickers(document.getElementById('q-model'), document.getElementById('q-tenant'), indexes,
    { model_name: params.get('model_name') ?? undefined, tenant_id: params.get('tenant_id') || (named ? 'default' : undefined) });
  if (resultFor !== null && resultFor !== indexKey(document.getElementById('q-model').value,
    document.getElementById('q-tenant').value)) {
    clearResult(); // another index: the results, their hint and their link are not about it
  }
  if (params.has(kind)) {
    document.querySelector(`#query-form input[name=kind][value=${kind}]`).checked = true;
    document.getElementById('q-input').value = params.get(kind).split(',').filter(Boolean).join(', ');
    document.getElementById('q-eagle').checked = isEagle(params);
    labelInput();
    if (readable(params) !== lastRun) run(params);
  } else {
    labelInput();
  }
}

function indexKey(model, tenant) {
  return JSON.stringify([model, tenant]);
}

function clearResult() {
  replace(document.getElementById('q-result'));
  document.getElementById('q-hint').textContent = '';
  document.getElementById('q-link').hidden = true;
  resultFor = null;
  lastRun = '';
}

/** Called on every refresh with the latest index list (new models appear in the pickers). */
export function updateIndexes(knownIndexes) {
  indexes = knownIndexes;
  const model = document.getElementById('q-model');
  const tenant = document.getElementById('q-tenant');
  fillPickers(model, tenant, indexes, { model_name: model.value || undefined, tenant_id: tenant.value || undefined });
}

function labelInput() {
  const kind = document.querySelector('#query-form input[name=kind]:checked').value;
  document.getElementById('q-input-label').textContent = kind === 'token_ids'
    ? 'Token ids (comma or space separated)'
    : 'Local block hashes (unsigned 64-bit decimals, XXH3 of each block\'s tokens)';
  // hashes are already cut: /query_by_hash has no is_eagle
  document.getElementById('q-eagle').disabled = kind !== 'token_ids';
}

/** EAGLE windows apply to token ids only, as /query's is_eagle does. */
function isEagle(params) {
  return params.has('token_ids') && params.get('is_eagle') === 'true';
}

function formParams() {
  const kind = document.querySelector('#query-form input[name=kind]:checked').value;
  const values = splitList(document.getElementById('q-input').value);
  const params = new URLSearchParams({
    model_name: document.getElementById('q-model').value,
    tenant_id: document.getElementById('q-tenant').value,
    [kind]: values.join(','),
  });
  if (kind === 'token_ids' && document.getElementById('q-eagle').checked) params.set('is_eagle', 'true');
  return params;
}

/** The address as people write it: commas stay commas (URLSearchParams would write %2C). */
function readable(params) {
  return params.toString().replace(/%2C/gi, ',');
}

function splitList(text) {
  return text.split(/[\s,;[\]]+/).filter(Boolean);
}

function validate(values, kind) {
  const max = kind === 'token_ids' ? U32_MAX : U64_MAX;
  for (const v of values) {
    if (!/^\d+$/.test(v) || BigInt(v) > max) {
      return `\`${v}\` is not ${kind === 'token_ids' ? 'a token id (0 to 2^32-1)' : 'an unsigned 64-bit hash'}`;
    }
  }
  return values.length ? null : 'nothing to query: enter at least one value';
}

async function run(params) {
  lastRun = readable(params);
  const out = document.getElementById('q-result');
  const hint = document.getElementById('q-hint');
  const kind = params.has('block_hashes') ? 'block_hashes' : 'token_ids';
  const values = splitList(params.get(kind) || '');
  const problem = validate(values, kind);
  const link = document.getElementById('q-link');
  link.href = `#query?${readable(params)}`;
  link.hidden = Boolean(problem); // no link to a query that cannot run
  if (problem) {
    replace(out, h('p', { class: 'error-box', role: 'alert' }, problem));
    hint.textContent = ''; // the previous query's, not this one's
    return;
  }
  const model = params.get('model_name') || '';
  const tenant = params.get('tenant_id') || 'default';
  resultFor = indexKey(model, tenant);
  const index = indexes.find((ix) => ix.model_name === model && ix.tenant_id === tenant);
  const blockSize = index ? index.block_size : null;
  const eagle = isEagle(params);
  // the ids go into the body as the digits typed: a u64 hash must not pass through a double
  const body = `{"model_name":${JSON.stringify(model)},"tenant_id":${JSON.stringify(tenant)},`
    + (eagle ? '"is_eagle":true,' : '')
    + `"${kind}":[${values.map((v) => BigInt(v).toString()).join(',')}]}`;
  hint.textContent = 'running…';
  out.setAttribute('aria-busy', 'true');
  try {
    const result = await json(kind === 'token_ids' ? '/query' : '/query_by_hash', { method: 'POST', body });
    render(out, result, { kind, count: values.length, blockSize });
    hint.textContent = describe(kind, values.length, blockSize, eagle);
  } catch (e) {
    replace(out, h('p', { class: 'error-box', role: 'alert' }, `${e.status || ''} ${e.message}`));
    hint.textContent = '';
  } finally {
    out.removeAttribute('aria-busy');
  }
}

function describe(kind, count, blockSize, eagle) {
  if (!blockSize) return '';
  if (kind !== 'token_ids') return `${fmt(count)} blocks = ${fmt(count * blockSize)} tokens (block size ${blockSize})`;
  // an EAGLE window is B + 1 tokens advancing by B: n tokens hold floor((n - 1) / B) of them (api.md, "POST /query")
  return eagle
    ? `${fmt(count)} tokens = ${fmt(Math.floor(Math.max(count - 1, 0) / blockSize))} EAGLE windows of ${blockSize} + 1`
    : `${fmt(count)} tokens = ${fmt(Math.floor(count / blockSize))} full blocks of ${blockSize}`;
}

function render(out, result, { kind, count, blockSize }) {
  const instances = result.instances || {};
  const ids = Object.keys(instances).sort((a, b) =>
    (instances[b].longest_matched - instances[a].longest_matched) || compareIds(a, b));
  const max = kind === 'token_ids' ? count : count * (blockSize || 1);
  if (!ids.length) {
    replace(out, h('p', { class: 'empty card', dataset: { matched: '0' } },
      'No worker holds the first block of this query.'));
    return;
  }
  replace(out, h('div', { class: 'instances', dataset: { matched: String(ids.length) } }, ids.map((id) => {
    const t = instances[id];
    const dp = t.dp || (result.scores || {})[id] || {};
    const ranks = Object.keys(dp).sort((a, b) => Number(a) - Number(b));
    return h('article', { class: 'card instance', dataset: { instance: id } },
      h('h3', {}, `Instance ${id}`, h('small', {}, ` longest ${fmt(t.longest_matched)} of ${fmt(max)} tokens`)),
      // /query's exact: false while a rank replays a gap, is degraded or has no listener; a router discounts it
      t.exact === false ? h('p', { class: 'note inexact', dataset: { field: 'exact' } },
        h('span', { class: 'badge exactness replaying' }, 'not exact'),
        ' the index may hold less than this instance does: see its exactness under Workers') : null,
      bar('longest_matched', t.longest_matched, max, 'longest_matched'),
      bar('gpu', t.gpu, max, 'gpu'),
      bar('cpu', t.cpu, max, 'cpu'),
      bar('disk', t.disk, max, 'disk'),
      h('div', { class: 'ranks' }, h('h4', {}, 'per dp rank (gpu)'),
        ranks.map((r) => h('div', { class: 'rank', dataset: { rank: r } }, bar(`dp ${r}`, dp[r], max, 'gpu')))));
  })));
}

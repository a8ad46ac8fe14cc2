// Tiny DOM helpers: elements from code (no innerHTML with data, so nothing from the API is ever parsed as HTML).

export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k === 'dataset') Object.assign(node.dataset, v);
    else if (k === 'style') node.style.cssText = v; // CSSOM, which the page's CSP allows (style attributes it does not)
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function replace(node, ...children) {
  node.replaceChildren();
  append(node, children);
}

/**
 * Makes a node's children equal to `children` while keeping the nodes that stay (matched by data-key, else by
 * position and tag) and changing only what differs: what a refresh redraws keeps its focus, a text selection and an
 * open disclosure. The kept nodes keep their own event listeners, so what is drawn this way has none that vary.
 */
export function sync(node, ...children) {
  const fresh = document.createDocumentFragment();
  append(fresh, children);
  syncChildren(node, fresh);
}

function syncChildren(node, fresh) {
  const keyed = new Map();
  for (const c of node.children) {
    if (c.dataset && c.dataset.key !== undefined) keyed.set(c.dataset.key, c);
  }
  const wanted = [...fresh.childNodes];
  wanted.forEach((next, i) => {
    const here = node.childNodes[i] ?? null;
    const key = next.dataset ? next.dataset.key : undefined;
    let old = key !== undefined ? keyed.get(key) : here;
    if (key === undefined && old && old.dataset && old.dataset.key !== undefined) old = null; // keyed: by key only
    keyed.delete(key);
    if (old && old.nodeType === next.nodeType && old.nodeName === next.nodeName) {
      morph(old, next);
      if (old !== here) node.insertBefore(old, here);
    } else {
      node.insertBefore(next, here);
    }
  });
  while (node.childNodes.length > wanted.length) node.lastChild.remove();
}

function morph(old, next) {
  if (old.nodeType !== Node.ELEMENT_NODE) {
    if (old.nodeValue !== next.nodeValue) old.nodeValue = next.nodeValue;
    return;
  }
  for (const a of [...old.attributes]) {
    // a disclosure's open state is the reader's, not the data's
    if (!next.hasAttribute(a.name) && !(a.name === 'open' && old.nodeName === 'DETAILS')) old.removeAttribute(a.name);
  }
  for (const a of next.attributes) {
    if (a.name === 'style') { // through the CSSOM, as h() sets it (the page's CSP refuses style attributes)
      if (old.style.cssText !== next.style.cssText) old.style.cssText = next.style.cssText;
    } else if (old.getAttribute(a.name) !== a.value) {
      old.setAttribute(a.name, a.value);
    }
  }
  syncChildren(old, next);
}

/** Names in the order people expect: model-2 before model-10 (digit runs compare as numbers). */
export const natural = new Intl.Collator(undefined, { numeric: true }).compare;

export function fmt(n) {
  return typeof n === 'number' ? n.toLocaleString('en-US') : String(n);
}

export function rate(n) {
  if (!Number.isFinite(n)) return '–';
  if (n === 0) return '0';
  if (n < 10) return n.toFixed(2);
  return Math.round(n).toLocaleString('en-US');
}

/** HH:MM:SS in the browser's time zone. */
export function clock(ms) {
  return new Date(Number(ms)).toTimeString().slice(0, 8);
}

/** An instant (epoch ms) as a <time>: HH:MM:SS, after its date when that is not today. */
export function stamp(ms) {
  const d = new Date(Number(ms));
  const pad = (n) => String(n).padStart(2, '0');
  const day = d.toDateString() === new Date().toDateString() ? ''
    : `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} `;
  return h('time', { datetime: d.toISOString() }, day + clock(ms));
}

export function worker(instanceId, dpRank) {
  return `${instanceId}:${dpRank}`;
}

/** A labelled horizontal bar: value / max, the number written out beside it. */
export function bar(label, value, max, kind) {
  const pct = max > 0 ? Math.min(100, (100 * value) / max) : 0;
  return h('div', { class: 'bar-row', dataset: { field: kind } },
    h('span', { class: 'bar-label' }, label),
    h('span', { class: 'bar-track', role: 'presentation' },
      h('span', { class: `bar-fill ${kind}`, style: `width:${pct.toFixed(1)}%` })),
    h('span', { class: 'bar-value num', dataset: { value: String(value) } }, fmt(value)));
}

export function statusBadge(status) {
  return h('span', { class: `badge ${status}`, dataset: { status } }, status);
}

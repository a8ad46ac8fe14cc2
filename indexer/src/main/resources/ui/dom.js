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
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function replace(node, ...children) {
  node.replaceChildren();
  append(node, children);
}

export function fmt(n) {
  return typeof n === 'number' ? n.toLocaleString('en-US') : String(n);
}

export function rate(n) {
  if (!Number.isFinite(n)) return '–';
  if (n === 0) return '0';
  if (n < 10) return n.toFixed(2);
  return Math.round(n).toLocaleString('en-US');
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

// The indexer's JSON API as the console uses it. Paths resolve against the page (../stats from /ui/), so the console
// also works behind a proxy that mounts the indexer under a prefix.

/** Endpoints that need the bearer token when auth is on; the token is never sent anywhere else. */
const PROTECTED = new Set(['/prefixes', '/dump', '/register', '/unregister', '/register_peer', '/deregister_peer', '/reopen_logs']);
/**
 * The token's key in the tab's sessionStorage, one per indexer: two indexers a proxy mounts under two prefixes of one
 * origin share its storage, and each must get its own token only (one indexer's token sent to the other was a leak).
 */
const TOKEN_KEY = `kv-indexer-token ${new URL('..', location.href).pathname}`;

let token = sessionStorage.getItem(TOKEN_KEY);
let pendingPrompt = null;
const NEEDS_TOKEN = 'this view needs the indexer\'s bearer token';
let declined = false; // cancelled once: do not prompt again on every refresh, until the user asks to
/** the server's clock minus the browser's, from the last answer's Date header: ages are the server's, not skewed */
let clockOffsetMs = 0;

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function url(path) {
  return new URL('..' + path, location.href);
}

/**
 * JSON.parse keeping u64 values exact: instance ids and block hashes can exceed 2^53, so any integer that a double
 * cannot hold is kept as its decimal text (the reviver's source text, where the browser offers it).
 */
export function parseJson(text) {
  return JSON.parse(text, (key, value, context) => {
    if (typeof value === 'number' && !Number.isSafeInteger(value) && context && /^\d+$/.test(context.source)) {
      return context.source;
    }
    return value;
  });
}

/** Sends a request; for a protected path, asks for the token once (and again only if it is refused). */
export async function request(path, { method = 'GET', body } = {}) {
  const route = path.split('?')[0];
  const guarded = PROTECTED.has(route);
  // the dialog was cancelled: sending it again without a token is a 401 every few refreshes, until the user asks
  if (guarded && !token && declined) throw new ApiError(401, NEEDS_TOKEN);
  for (let attempt = 0; ; attempt++) {
    const headers = {};
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (guarded && token) headers.Authorization = 'Bearer ' + token;
    const res = await fetch(url(path), { method, headers, body, cache: 'no-store' });
    const date = Date.parse(res.headers.get('Date') || '');
    if (!Number.isNaN(date)) clockOffsetMs = date - Date.now();
    if (res.status === 401 && guarded && attempt < 3) {
      const refused = token !== null;
      token = null;
      sessionStorage.removeItem(TOKEN_KEY);
      const given = declined ? null : await askToken(refused);
      if (given === null) {
        declined = true;
        throw new ApiError(401, NEEDS_TOKEN);
      }
      continue;
    }
    return res;
  }
}

/** GET or POST returning parsed JSON; a non-2xx answer becomes an ApiError with the server's `error` text. */
export async function json(path, options) {
  const res = await request(path, options);
  const text = await res.text();
  let data = null;
  try {
    data = text ? parseJson(text) : null;
  } catch (e) {
    throw new ApiError(res.status, `${path}: not JSON (${res.status})`);
  }
  if (!res.ok && !(path === '/ready' && res.status === 503)) {
    throw new ApiError(res.status, (data && data.error) || `${path} answered ${res.status}`);
  }
  return data;
}

export async function text(path) {
  const res = await request(path);
  if (!res.ok) throw new ApiError(res.status, `${path} answered ${res.status}`);
  return res.text();
}

/** Now on the server's clock (epoch ms), as its last answer told it to the second; the browser's before any. */
export function serverNow() {
  return Date.now() + clockOffsetMs;
}

/** Lets the next protected request prompt again after the token dialog was cancelled. */
export function allowTokenPrompt() {
  declined = false;
}

/**
 * Why a typed token cannot be sent, or '': a header carries printable ASCII only (the indexer refuses a token file
 * of anything else), and fetch throws on a character past Latin-1, which no answer, and so no new prompt, follows.
 */
export function tokenProblem(value) {
  const chars = [...value];
  const at = chars.findIndex((c) => c < ' ' || c > '~');
  if (at < 0) return '';
  const code = chars[at].codePointAt(0).toString(16).toUpperCase().padStart(4, '0');
  return `“${chars[at]}” (U+${code}) at character ${at + 1} cannot be sent: a bearer token is printable ASCII.`;
}

function askToken(refused) {
  if (pendingPrompt) return pendingPrompt; // several requests at once share one prompt
  const dialog = document.getElementById('token-dialog');
  const input = document.getElementById('token-input');
  const problem = document.getElementById('token-problem');
  document.getElementById('token-why').textContent = refused
    ? 'The token was refused. Enter the indexer\'s bearer token again.'
    : 'This view needs the indexer\'s bearer token. It is kept in this tab only and sent only to protected endpoints.';
  input.value = '';
  // the form does not submit while the input is invalid: the dialog stays open and says why
  input.oninput = () => {
    problem.textContent = tokenProblem(input.value.trim());
    problem.hidden = !problem.textContent;
    input.setCustomValidity(problem.textContent);
  };
  input.oninput();
  pendingPrompt = new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      pendingPrompt = null;
      const value = input.value.trim();
      if (dialog.returnValue === 'ok' && value && !tokenProblem(value)) {
        token = value;
        sessionStorage.setItem(TOKEN_KEY, value);
        resolve(value);
      } else {
        resolve(null);
      }
    }, { once: true });
  });
  dialog.returnValue = '';
  dialog.showModal();
  input.focus();
  return pendingPrompt;
}

/** Prometheus text exposition → [{name, labels, value}] (comments and blank lines skipped). */
export function parseMetrics(body) {
  const out = [];
  for (const line of body.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels = {};
    if (m[3]) {
      for (const l of m[3].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    }
    out.push({ name: m[1], labels, value: Number(m[4]) });
  }
  return out;
}

/** Sum of a metric's samples whose labels pass `keep`. */
export function sum(samples, name, keep = () => true) {
  let total = 0;
  for (const s of samples) {
    if (s.name === name && keep(s.labels) && Number.isFinite(s.value)) total += s.value;
  }
  return total;
}

// Process card (overview): this replica's heap, resident memory, file descriptors, threads, uptime, JVM, where its
// state came from at start and its snapshots, read from the same /metrics sample as the charts (docs/metrics.md).

import { h, sync, fmt } from './dom.js';

let shown = null;

/** Redraws the card from parsed /metrics samples ([{name, labels, value}]) when its figures changed. */
export function renderProcess(samples) {
  const one = (name, keep = () => true) => {
    const s = samples.find((x) => x.name === name && keep(x.labels));
    return s ? s.value : null;
  };
  const heap = (l) => l.area === 'heap';
  const used = one('jvm_memory_used_bytes', heap);
  const max = one('jvm_memory_max_bytes', heap);
  const rss = one('process_resident_memory_bytes');
  const fds = one('process_open_fds');
  const maxFds = one('process_max_fds');
  const threads = one('jvm_threads_current');
  const started = one('process_start_time_seconds');
  const runtime = samples.find((x) => x.name === 'jvm_runtime_info');
  const recovery = samples.find((x) => x.name === 'dynamo_kvindexer_startup_recovery_seconds');
  const snapshot = one('dynamo_kvindexer_snapshot_bytes');
  const free = one('dynamo_kvindexer_snapshot_dir_free_bytes');
  const rows = [
    ['heap', 'Heap', used === null ? '–'
      : `${bytes(used)}${max > 0 ? ` of ${bytes(max)} (${Math.round((100 * used) / max)} %)` : ''}`],
    ['resident', 'Resident memory', rss === null ? '–' : bytes(rss)],
    ['fds', 'File descriptors', fds === null ? '–' : `${fmt(fds)}${maxFds > 0 ? ` of ${fmt(maxFds)}` : ''}`],
    ['threads', 'Platform threads', threads === null ? '–' : fmt(threads)],
    ['uptime', 'Up', started === null ? '–' : since(started)],
    ['jvm', 'JVM', runtime ? `${runtime.labels.version} (${runtime.labels.vendor})` : '–'],
    ['state', 'State from', recovery ? stateFrom(recovery.labels.source, recovery.value) : 'recovering'],
    ['snapshots', 'Snapshots', snapshots(snapshot, free)],
  ];
  const text = JSON.stringify(rows);
  if (text === shown) return;
  shown = text;
  sync(document.getElementById('process'), ...rows.map(([field, label, value]) => h('div', { class: 'fact' },
    h('dt', {}, label), h('dd', { class: 'num', dataset: { field } }, value))));
}

/** Where startup recovery found the state: the source label of dynamo_kvindexer_startup_recovery_seconds. */
export function stateFrom(source, seconds) {
  const took = ` in ${seconds < 10 ? seconds.toPrecision(2) : Math.round(seconds)} s`;
  switch (source) {
    case 'peer': return `a peer${took}`;
    case 'snapshot': return `its snapshot${took}`;
    case 'blank_peer': return `a blank peer: registrations only${took}`;
    case 'none': return 'nothing: started empty';
    default: return `${source}${took}`;
  }
}

/**
 * The newest snapshot's size and the space left beside it (--snapshot-dir); the next one is written before the oldest
 * goes, so it needs about the newest one's size free (alert KvIndexerSnapshotVolumeNearlyFull).
 */
export function snapshots(size, free) {
  if (size === null) return 'none written';
  if (free === null) return `${bytes(size)} newest`;
  return `${bytes(size)} newest, ${bytes(free)} free${free < 1.25 * size ? ': the next may not fit' : ''}`;
}

/**
 * Bytes in binary units, three significant digits: 812 MiB, 1.50 GiB; from 1,000 to 1,023 of a unit the whole
 * number (toPrecision(3) would write 1010 as 1.01e+3).
 */
export function bytes(n) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i === 0 || n >= 100 ? Math.round(n) : n.toPrecision(3)} ${units[i]}`;
}

/** How long since an epoch-seconds instant, to the minute: 3 h 12 min, 45 s. */
function since(epochSeconds) {
  const s = Math.max(0, Math.round(Date.now() / 1000 - epochSeconds));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const hours = Math.floor(m / 60);
  return hours < 48 ? `${hours} h ${m % 60} min` : `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

// Process card (overview): this replica's heap, resident memory, file descriptors, threads, uptime, JVM, where its
// state came from at start and its snapshots, read from the same /metrics sample as the charts (docs/metrics.md).

import { h, sync, fmt } from './dom.js';
import { serverNow } from './api.js';

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
  const written = one('dynamo_kvindexer_snapshot_last_success_timestamp_seconds');
  const interval = one('dynamo_kvindexer_snapshot_interval_seconds'); // exposed with --snapshot-dir only
  const rows = [
    ['heap', 'Heap', used === null ? '–'
      : `${bytes(used)}${max > 0 ? ` of ${bytes(max)} (${Math.round((100 * used) / max)} %)` : ''}`],
    ['resident', 'Resident memory', rss === null ? '–' : bytes(rss)],
    ['fds', 'File descriptors', fds === null ? '–' : `${fmt(fds)}${maxFds > 0 ? ` of ${fmt(maxFds)}` : ''}`],
    ['threads', 'Platform threads', threads === null ? '–' : fmt(threads)],
    ['uptime', 'Up', started === null ? '–' : since(started)],
    ['jvm', 'JVM', runtime ? `${runtime.labels.version} (${runtime.labels.vendor})` : '–'],
    ['state', 'State from', recovery ? stateFrom(recovery.labels.source, recovery.value) : 'recovering'],
    ['snapshots', 'Snapshots', interval === null ? 'not kept (no --snapshot-dir)' : snapshots(snapshot, free)],
  ];
  if (interval !== null && written !== null) {
    const age = freshness(written, interval, snapshot !== null, serverNow() / 1000);
    rows.push(['snapshot-age', 'Newest snapshot', age.text, age.overdue]);
  }
  const text = JSON.stringify(rows);
  if (text === shown) return;
  shown = text;
  sync(document.getElementById('process'), ...rows.map(([field, label, value, overdue]) => h('div', { class: 'fact' },
    h('dt', {}, label), h('dd', { class: overdue ? 'num overdue' : 'num', dataset: { field } }, value))));
}

/**
 * How old the newest snapshot is (written: epoch seconds, dynamo_kvindexer_snapshot_last_success_timestamp_seconds,
 * which is the start until one exists; any: one exists), and whether it is overdue by alert
 * KvIndexerSnapshotsOverdue's rule: older than three intervals (seconds) and 5 minutes.
 */
export function freshness(written, interval, any, now) {
  const age = Math.max(0, now - written);
  const overdue = age > 3 * interval + 300;
  const text = any ? `written ${duration(age)} ago` : `none yet, ${duration(age)} after the start`;
  return { text: overdue ? `${text}: overdue (one every ${duration(interval)})` : text, overdue };
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

/** How long since an epoch-seconds instant on the server's clock, to the minute: 3 h 12 min, 45 s. */
function since(epochSeconds) {
  return duration(serverNow() / 1000 - epochSeconds);
}

/** A span of seconds in words, to the minute past one: 45 s, 12 min, 3 h 12 min, 2 d 5 h. */
export function duration(seconds) {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const hours = Math.floor(m / 60);
  return hours < 48 ? `${hours} h ${m % 60} min` : `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/**
 * The status page at `/` on the admin port: topics and their tables (freshness lag in records and ms, data
 * files, snapshots, last commit), data-quality signals with a flag when one leaves its baseline, and two
 * small charts per topic (freshness lag and produce throughput over the last hour). It fetches
 * `/api/status` every few seconds; the broker does no work while nobody looks (the history is sampled
 * anyway, see status-history.ts). The charts are drawn with uPlot, served from the broker's own
 * node_modules (`/assets/uPlot.iife.min.js`, `/assets/uPlot.min.css`): no CDN, the page works offline.
 *
 * For tests and scripts, the page keeps the data it drew in `window.floeStatus` (topics, chart series).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { AdminRoute } from './admin-server.js';

const ASSETS: Readonly<Record<string, { file: string; type: string }>> = {
  '/assets/uPlot.iife.min.js': { file: 'dist/uPlot.iife.min.js', type: 'text/javascript; charset=utf-8' },
  '/assets/uPlot.min.css': { file: 'dist/uPlot.min.css', type: 'text/css; charset=utf-8' },
};

/** Where the uplot package is installed (a runtime dependency). */
function uplotDir(): string {
  const require = createRequire(import.meta.url);
  return dirname(require.resolve('uplot/package.json'));
}

export function statusPageRoutes(): AdminRoute[] {
  const cache = new Map<string, Buffer>();
  const routes: AdminRoute[] = [{ method: 'GET', path: '/', handler: () => ({ status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body: STATUS_HTML }) }];
  for (const [path, asset] of Object.entries(ASSETS)) {
    routes.push({
      method: 'GET',
      path,
      handler: async () => {
        let body = cache.get(path);
        if (body === undefined) {
          body = await readFile(join(uplotDir(), asset.file));
          cache.set(path, body);
        }
        return { status: 200, headers: { 'content-type': asset.type }, body };
      },
    });
  }
  return routes;
}

const STATUS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Floe status</title>
<link rel="stylesheet" href="/assets/uPlot.min.css">
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; max-width: 1200px; }
  h1 { font-size: 1.3em; margin: 0 0 .2em; }
  #updated { color: #666; font-size: .9em; }
  table { border-collapse: collapse; width: 100%; margin: 1em 0; }
  th, td { text-align: left; padding: .3em .6em; border-bottom: 1px solid #ddd; white-space: nowrap; }
  th { background: #f4f4f4; }
  td.num { text-align: right; font-variant-numeric: tabular-nums; }
  .flag { color: #b00; font-weight: bold; }
  .ok { color: #070; }
  .topic { margin: 1.2em 0; }
  .charts { display: flex; gap: 1em; flex-wrap: wrap; }
  .chart h3 { font-size: .95em; margin: .2em 0; font-weight: normal; }
</style>
</head>
<body>
<h1>Floe status</h1>
<div id="updated">loading…</div>
<table id="topics">
  <thead><tr><th>topic</th><th>table</th><th>lag (records)</th><th>lag (ms)</th><th>data files</th><th>snapshots</th><th>last commit</th><th>records/min</th><th>baseline</th><th>null keys</th><th>null values</th><th>dead letters</th><th>kept raw</th></tr></thead>
  <tbody></tbody>
</table>
<div id="charts"></div>
<script src="/assets/uPlot.iife.min.js"></script>
<script>
(function () {
  var REFRESH_MS = 5000;
  var plots = {};
  window.floeStatus = { topics: [], series: {}, refreshed: 0 };
  function pct(v) { return v === undefined || v === null ? '–' : (v * 100).toFixed(1) + '%'; }
  function num(v) { return v === undefined || v === null ? '–' : String(Math.round(v)); }
  function cell(row, text, cls) { var td = document.createElement('td'); td.textContent = text; if (cls) td.className = cls; row.appendChild(td); return td; }
  function flagged(text, flag) { return flag ? text + ' ⚠' : text; }
  function chart(id, title, label, xs, ys, parent) {
    var data = [xs, ys];
    window.floeStatus.series[id] = { x: xs, y: ys };
    if (plots[id]) { plots[id].setData(data); return; }
    var box = document.createElement('div'); box.className = 'chart';
    var h = document.createElement('h3'); h.textContent = title; box.appendChild(h);
    parent.appendChild(box);
    plots[id] = new uPlot({ width: 420, height: 160, scales: { x: { time: true } }, series: [{}, { label: label, stroke: '#1f6fb2', width: 1.5, fill: 'rgba(31,111,178,0.1)' }] }, data, box);
    box.setAttribute('data-chart', id);
  }
  function render(status) {
    window.floeStatus.topics = status.topics;
    var body = document.querySelector('#topics tbody');
    body.textContent = '';
    var charts = document.getElementById('charts');
    status.topics.forEach(function (t) {
      var last = t.points[t.points.length - 1] || { lagRecords: 0, lagMs: 0 };
      var q = t.quality;
      var row = document.createElement('tr');
      row.setAttribute('data-topic', t.topic);
      cell(row, t.topic);
      cell(row, t.table ? t.table.table : '(not tiered)');
      cell(row, t.table ? String(t.table.lagRecords) : '–', 'num lag-records');
      cell(row, t.table ? String(t.table.lagMs) : '–', 'num lag-ms');
      cell(row, t.table ? String(t.table.dataFiles) : '–', 'num');
      cell(row, t.table ? String(t.table.snapshots) : '–', 'num');
      cell(row, t.table && t.table.lastCommitMs >= 0 ? new Date(t.table.lastCommitMs).toLocaleTimeString() : '–');
      cell(row, flagged(num(q.recordsPerMinute), q.rateFlag), 'num' + (q.rateFlag ? ' flag' : ''));
      cell(row, num(q.recordsPerMinuteBaseline), 'num');
      cell(row, flagged(pct(q.nullKeyShare) + ' (hour ' + pct(q.nullKeyShareBaseline) + ')', q.nullKeyFlag), q.nullKeyFlag ? 'flag' : '');
      cell(row, flagged(pct(q.nullValueShare) + ' (hour ' + pct(q.nullValueShareBaseline) + ')', q.nullValueFlag), q.nullValueFlag ? 'flag' : '');
      // Typed topics only: a key_value topic has no dead letters or raw-kept values.
      var typed = q.deadLetterShareBaseline !== undefined && q.deadLetterShareBaseline !== null;
      cell(row, typed ? flagged(pct(q.deadLetterShare) + ' (hour ' + pct(q.deadLetterShareBaseline) + ')', q.deadLetterFlag) : '–', q.deadLetterFlag ? 'flag dead-letters' : 'dead-letters');
      cell(row, typed ? flagged(pct(q.rawKeptShare) + ' (hour ' + pct(q.rawKeptShareBaseline) + ')', q.rawKeptFlag) : '–', q.rawKeptFlag ? 'flag raw-kept' : 'raw-kept');
      body.appendChild(row);
      var group = document.getElementById('topic-' + t.topic);
      if (!group) {
        group = document.createElement('div'); group.className = 'topic'; group.id = 'topic-' + t.topic;
        var h = document.createElement('h2'); h.style.fontSize = '1.05em'; h.textContent = t.topic; group.appendChild(h);
        var c = document.createElement('div'); c.className = 'charts'; group.appendChild(c);
        charts.appendChild(group);
      }
      var xs = t.points.map(function (p) { return p.t / 1000; });
      var holder = group.querySelector('.charts');
      chart(t.topic + ':lag', 'freshness lag (ms of event time), last hour', 'lag ms', xs, t.points.map(function (p) { return p.lagMs; }), holder);
      chart(t.topic + ':throughput', 'produce throughput (records/s), last hour', 'records/s', xs, t.points.map(function (p) { return p.recordsPerSecond; }), holder);
    });
    document.getElementById('updated').textContent = 'updated ' + new Date(status.now).toLocaleTimeString() + ' · refreshes every ' + REFRESH_MS / 1000 + ' s';
    window.floeStatus.refreshed++;
  }
  function refresh() {
    fetch('/api/status').then(function (r) { return r.json(); }).then(render).catch(function (err) {
      document.getElementById('updated').textContent = 'broker unreachable: ' + err;
    }).finally(function () { setTimeout(refresh, REFRESH_MS); });
  }
  refresh();
})();
</script>
</body>
</html>
`;

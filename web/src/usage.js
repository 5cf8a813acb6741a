// Usage: GPU-hours per account, user or partition over the last day, week
// or month; the wait-time distribution and the GPUs' utilisation. Computed
// here from the accounting rows (GET /v1/accounting: one per job attempt)
// and the running jobs; the totals table is the server's (GET /v1/usage).
import { api } from './api.js';
import { store } from './store.js';
import { esc, fmtNum, fmtDuration, pct, colourMap, now } from './util.js';
import { accountColours } from './cluster.js';

const PERIODS = { day: { span: 86400, bin: 3600 }, week: { span: 7 * 86400, bin: 6 * 3600 }, month: { span: 30 * 86400, bin: 86400 } };
const view = { period: 'day', by: 'account' };
const WAIT_BUCKETS = [[60, '< 1 min'], [300, '1–5 min'], [900, '5–15 min'], [3600, '15–60 min'], [4 * 3600, '1–4 h'], [12 * 3600, '4–12 h'], [Infinity, '> 12 h']];
const TOP = 8;
let charts = [];

const groupOf = (j) => (view.by === 'user' ? j.spec?.user : view.by === 'partition' ? j.spec?.partition : j.spec?.account) || '?';

function rowsWithRunning(acct) {
  const seen = new Set(acct.map((j) => j.job_id));
  const running = [...store.jobs.values()].filter((j) => j.start_time && !seen.has(j.job_id));
  return acct.concat(running);
}

// GPU-seconds per group per bin: each job's [start, end) cut at bin edges.
function series(rows, t0, t1, bin) {
  const n = Math.ceil((t1 - t0) / bin), per = new Map(), total = new Array(n).fill(0), tnow = now();
  for (const j of rows) {
    if (!j.start_time || !j.ngpus) continue;
    const a = Math.max(j.start_time, t0), b = Math.min(j.end_time || tnow, t1);
    if (b <= a) continue;
    const g = groupOf(j);
    if (!per.has(g)) per.set(g, new Array(n).fill(0));
    const arr = per.get(g);
    for (let k = Math.floor((a - t0) / bin); k < n && t0 + k * bin < b; k++) {
      const lo = Math.max(a, t0 + k * bin), hi = Math.min(b, t0 + (k + 1) * bin);
      if (hi > lo) {
        arr[k] += (hi - lo) * j.ngpus;
        total[k] += (hi - lo) * j.ngpus;
      }
    }
  }
  return { n, per, total };
}

function waitHistogram(rows, t0) {
  const counts = WAIT_BUCKETS.map(() => 0);
  let sum = 0, m = 0;
  for (const j of rows) {
    if (!j.start_time || j.start_time < t0) continue;
    const w = Math.max(0, j.start_time - (j.eligible_time || j.submit_time));
    counts[WAIT_BUCKETS.findIndex(([lim]) => w < lim)]++;
    sum += w;
    m++;
  }
  const max = Math.max(1, ...counts);
  const bars = counts.map((c, i) => `<div class="hbar"><span class="k">${WAIT_BUCKETS[i][1]}</span><div class="track"><span style="width:${(100 * c) / max}%"></span></div><span class="n">${fmtNum(c)}</span></div>`);
  return `<div id="waits">${bars.join('')}</div><p class="hint">${fmtNum(m)} jobs started; mean wait ${fmtDuration(m ? sum / m : 0)}</p>`;
}

// Stacked bars: series k is the sum of groups 0..k, drawn largest first, so
// that each group shows as its own band of the bar.
function chart(uPlot, el, xs, ys, names, colours, yLabel, fmt) {
  const width = Math.max(280, el.clientWidth - 8);
  const cum = ys.map((_, k) => xs.map((_, i) => ys.slice(0, k + 1).reduce((a, y) => a + y[i], 0)));
  const order = names.map((_, k) => k).reverse();
  const opts = {
    width, height: 240,
    scales: { x: { time: true } },
    axes: [{}, { label: yLabel, size: 60, values: (u, v) => v.map(fmt) }],
    legend: { live: false },
    series: [{}].concat(order.map((k) => ({
      label: names[k], stroke: colours.get(names[k]) || '#555', fill: colours.get(names[k]) || '#555', width: 0,
      paths: uPlot.paths.bars({ size: [0.8, 40] }), points: { show: false },
    }))),
  };
  const u = new uPlot(opts, [xs, ...order.map((k) => cum[k])], el);
  charts.push(u);
  // follow the panel's width (a phone turned, a window resized)
  const ro = new ResizeObserver(() => {
    const w = Math.max(260, el.clientWidth - 8);
    if (w !== u.width) u.setSize({ width: w, height: 240 });
  });
  ro.observe(el);
  u.ro = ro;
}

export async function renderUsage(root) {
  const p = PERIODS[view.period], t1 = Math.ceil(now() / p.bin) * p.bin, t0 = t1 - p.span;
  const seg = (name, vals) => `<div class="seg" role="group">${vals.map((v) => `<button data-${name}="${v}" class="${view[name] === v ? 'on' : ''}">${v}</button>`).join('')}</div>`;
  root.innerHTML = `<h1>Usage</h1><div class="toolbar">${seg('period', Object.keys(PERIODS))}${seg('by', ['account', 'user', 'partition'])}</div>
    <section class="panel"><h3>GPU-hours per ${esc(view.by)}, last ${esc(view.period)}</h3><div id="gpuh" class="chart"></div></section>
    <div class="cols"><section class="panel"><h3>GPU utilisation</h3><div id="util" class="chart"></div></section>
    <section class="panel"><h3>Wait before start</h3><div id="waitbox"><p class="hint">loading…</p></div></section></div>
    <section class="panel scroll"><h3>Totals, last ${esc(view.period)}</h3><div id="totalsbox"><p class="hint">loading…</p></div></section>`;
  root.querySelectorAll('[data-period],[data-by]').forEach((b) => b.addEventListener('click', () => {
    if (b.dataset.period) view.period = b.dataset.period;
    if (b.dataset.by) view.by = b.dataset.by;
    renderUsage(root);
  }));
  const since = Math.floor(t0);
  const [{ default: uPlot }, acct, usage] = await Promise.all([import('./charts.js'),
    api(`/v1/accounting?since=${since}&limit=100000`), api(`/v1/usage?since=${since}&by=${view.by}`),
  ]);
  if (!root.isConnected || !root.querySelector('#gpuh')) return;
  charts.forEach((c) => (c.ro.disconnect(), c.destroy()));
  charts = [];
  const rows = rowsWithRunning(acct.jobs || []);
  const s = series(rows, t0, t1, p.bin);
  const xs = Array.from({ length: s.n }, (_, k) => t0 + (k + 0.5) * p.bin); // bars at the bins' middles
  const ranked = [...s.per].sort((a, b) => b[1].reduce((x, y) => x + y, 0) - a[1].reduce((x, y) => x + y, 0));
  const top = ranked.slice(0, TOP), rest = ranked.slice(TOP);
  if (rest.length) top.push(['other', xs.map((_, k) => rest.reduce((a, [, v]) => a + v[k], 0))]);
  // an account keeps the colour it has on the GPU map
  const colours = view.by === 'account' ? accountColours() : colourMap(top.map(([n]) => n));
  colours.set('other', '#9aa5b4');
  // axis ticks: three significant digits below 100 (0.02, 1.5, 42), whole numbers above
  const tick = (v) => (v == null ? '' : Math.abs(v) >= 100 ? fmtNum(v) : String(+v.toPrecision(3)));
  chart(uPlot, root.querySelector('#gpuh'), xs, top.map(([, v]) => v.map((x) => x / 3600)), top.map(([n]) => n), colours, 'GPU-hours', tick);
  const gpus = store.nodes.reduce((a, n) => a + (n.gpus || 0), 0) || 1;
  const elapsed = (k) => Math.max(1, Math.min(p.bin, now() - (t0 + k * p.bin))); // the last bin is still filling
  chart(uPlot, root.querySelector('#util'), xs, [s.total.map((x, k) => (100 * x) / (gpus * elapsed(k)))], ['in use'], new Map([['in use', '#4e79a7']]), '% of GPUs', (v) => (v == null ? '' : `${tick(v)}%`));
  root.querySelector('#waitbox').innerHTML = waitHistogram(rows, t0);
  const trows = (usage.usage || []).map((u) => `<tr><td>${esc(u.key)}</td><td class="num">${fmtNum(u.gpu_hours, 1)}</td><td class="num">${fmtNum(u.jobs)}</td>
    <td class="num">${fmtDuration(u.avg_wait_s)}</td><td class="num">${u.share != null ? pct(u.share) : ''}</td><td class="num">${u.fair_share != null ? pct(u.fair_share) : ''}</td></tr>`);
  root.querySelector('#totalsbox').innerHTML = `<table class="jobs" id="usagetable"><thead><tr><th>${esc(view.by)}</th><th class="num">GPU-hours</th><th class="num">jobs</th>
    <th class="num">mean wait</th><th class="num">share of use</th><th class="num">fair share</th></tr></thead><tbody>${trows.join('') || '<tr><td colspan="6" class="empty">no finished jobs in this period</td></tr>'}</tbody></table>`;
}

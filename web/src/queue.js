// Queue: pending and running jobs with filters; each pending job's reason,
// what would let it run and its expected start (the API's `why` data).
import { api } from './api.js';
import { store } from './store.js';
import { esc, fmtDuration, fmtTime, fmtNum, now, stateBadge, jobLabel, readableTimes } from './util.js';

const MAX_ROWS = 500; // a page of rows; the filters narrow the rest
const filt = { user: '', account: '', partition: '', state: 'active' };

// who waits, and why, first; then what runs
const ORDER = { PENDING: 0, RUNNING: 1, COMPLETING: 2 };

function wanted(j) {
  const sp = j.spec || {};
  if (filt.state === 'active' && !(j.state in ORDER)) return false;
  if (filt.state !== 'active' && filt.state !== 'all' && j.state !== filt.state) return false;
  if (filt.user && sp.user !== filt.user) return false;
  if (filt.account && sp.account !== filt.account) return false;
  if (filt.partition && sp.partition !== filt.partition) return false;
  // an array's own record is its pending line only while tasks wait
  return !(j.array_job_id === j.job_id && j.state !== 'PENDING');
}

function sorted(list) {
  return list.sort((a, b) => (ORDER[a.state] ?? 3) - (ORDER[b.state] ?? 3) ||
    (b.priority || 0) - (a.priority || 0) || a.job_id - b.job_id);
}

function options(name, values, label) {
  const opts = [...new Set(values)].filter(Boolean).sort()
    .map((v) => `<option${filt[name] === v ? ' selected' : ''}>${esc(v)}</option>`);
  return `<label>${label}<select data-f="${name}"><option value="">any</option>${opts.join('')}</select></label>`;
}

function filters(all) {
  const states = ['active', 'RUNNING', 'PENDING', 'COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT', 'all'];
  return `<form class="filters">
    ${options('user', all.map((j) => j.spec?.user), 'user')}
    ${options('account', all.map((j) => j.spec?.account), 'account')}
    ${options('partition', store.partitions.map((p) => p.name), 'partition')}
    <label>state<select data-f="state">${states.map((s) => `<option${filt.state === s ? ' selected' : ''}>${s}</option>`).join('')}</select></label>
  </form>`;
}

// The listing carries each pending job's reason; the long answer (what
// said no, what would let it run, the backfill plan's start) is computed
// per job by GET /v1/jobs/{id}. Asked for the pending rows on screen, again
// when the job changes or after WHY_TTL_MS.
const WHY_ROWS = 40, WHY_TTL_MS = 15000;
const whyCache = new Map(); // id -> { job (the version asked about), at, why, expected_start }

function whyOf(j) {
  const c = whyCache.get(j.job_id);
  return c && c.job === j ? c : null;
}

async function fetchWhys(root, list) {
  const due = list.filter((j) => j.state === 'PENDING').slice(0, WHY_ROWS)
    .filter((j) => { const c = whyOf(j); return !c || performance.now() - c.at > WHY_TTL_MS; });
  for (let i = 0; i < due.length; i += 4) {
    await Promise.all(due.slice(i, i + 4).map(async (j) => {
      try {
        const full = await api(`/v1/jobs/${j.job_id}`);
        whyCache.set(j.job_id, { job: j, at: performance.now(), why: full.why, expected_start: full.expected_start });
        const cell = root.querySelector(`#queue tr[data-job="${j.job_id}"] td.wide`);
        if (cell) cell.innerHTML = whereOrWhy(j);
      } catch { /* the job ended meanwhile: the next change repaints */ }
    }));
  }
}

function whereOrWhy(j) {
  if (j.state === 'PENDING') {
    const w = whyOf(j) || whyCache.get(j.job_id) || j;
    j = { ...j, why: w.why, expected_start: w.expected_start };
    const start = j.expected_start ? `<div class="start">expected start ${fmtTime(j.expected_start)} (in ${fmtDuration(j.expected_start - now())})</div>` : '';
    const why = j.why ? `<div class="whytext">${esc(readableTimes(j.why))}</div>` : '';
    return `<span class="reason">${esc(j.reason || '')}</span>${why}${start}`;
  }
  return `<span class="nodes">${esc(j.nodelist || '')}</span>`;
}

function row(j) {
  const sp = j.spec || {};
  const t = j.state === 'PENDING' ? now() - (j.eligible_time || j.submit_time)
    : j.start_time ? (j.end_time || now()) - j.start_time : 0;
  return `<tr data-job="${j.job_id}" class="r-${esc(j.state.toLowerCase())}">
    <td><a href="#/job/${j.job_id}">${esc(jobLabel(j))}</a></td><td class="name opt">${esc(sp.name || '')}</td>
    <td>${esc(sp.user || '')}</td><td>${esc(sp.account || '')}</td><td class="opt">${esc(sp.partition || '')}</td>
    <td>${stateBadge(j.state)}</td><td class="num">${fmtNum(j.ngpus || (sp.gpus_per_node || 0) * (sp.nodes_min || 1))}</td>
    <td class="num">${fmtDuration(t)}</td><td class="wide">${whereOrWhy(j)}</td></tr>`;
}

function body(list) {
  const rows = list.slice(0, MAX_ROWS).map(row).join('');
  return rows || '<tr><td colspan="9" class="empty">no jobs match</td></tr>';
}

// The filters are built once per visit; a change in the queue replaces the
// counts and the rows only, so an open drop-down stays open.
export function renderQueue(root, update = false) {
  const all = [...store.jobs.values()];
  const list = sorted(all.filter(wanted));
  const pend = list.filter((j) => j.state === 'PENDING').length;
  const reasons = new Map();
  for (const j of list) if (j.state === 'PENDING') reasons.set(j.reason, (reasons.get(j.reason) || 0) + 1);
  const rsum = [...reasons].sort((a, b) => b[1] - a[1]).map(([r, n]) => `<span class="chip static">${esc(r)} <small>${n}</small></span>`).join('');
  const more = (list.length > MAX_ROWS ? `Showing ${MAX_ROWS} of ${fmtNum(list.length)} jobs: narrow the filters to see the rest. ` : '') +
    (store.complete ? '' : 'Loading the rest of the queue…');
  const head = `Queue <small>${fmtNum(list.length - pend)} running · ${fmtNum(pend)} pending</small>`;
  const form = filters(all);
  if (update && root.querySelector('#queue')) {
    if (root.dataset.filters !== form) { // a new user or account to choose
      root.querySelector('.filters').outerHTML = form;
      bind(root);
    }
    root.dataset.filters = form;
    root.querySelector('h1').innerHTML = head;
    root.querySelector('.reasons').innerHTML = rsum;
    root.querySelector('#queue tbody').innerHTML = body(list);
    root.querySelector('#more').textContent = more;
    fetchWhys(root, list);
    return;
  }
  root.dataset.filters = form;
  root.innerHTML = `<h1>${head}</h1>${form}<div class="chips reasons">${rsum}</div>
    <section class="panel scroll"><table class="jobs" id="queue"><thead><tr><th>job</th><th class="opt">name</th><th>user</th><th>account</th><th class="opt">partition</th>
    <th>state</th><th class="num">GPUs</th><th class="num">time</th><th>nodes / why pending</th></tr></thead>
    <tbody>${body(list)}</tbody></table><p class="hint" id="more">${more}</p></section>`;
  bind(root);
  fetchWhys(root, list);
}

function bind(root) {
  root.querySelectorAll('[data-f]').forEach((s) => s.addEventListener('change', () => {
    filt[s.dataset.f] = s.value;
    renderQueue(root);
  }));
}

// One job: its spec, timeline, nodes and GPUs, and its output's last lines
// (for its owner, its account's coordinators and operators: the server
// decides, GET /v1/jobs/{id}/output).
import { api } from './api.js';
import { store } from './store.js';
import { esc, fmtDuration, fmtTime, fmtNum, now, stateBadge, gpusByNode, jobLabel, readableTimes } from './util.js';

const HIDDEN_SPEC = new Set(['script', 'env', 'argv']);

function timeline(j) {
  const marks = [['submitted', j.submit_time], ['eligible', j.eligible_time], ['started', j.start_time], ['ended', j.end_time]];
  const t0 = j.submit_time, t1 = j.end_time || now();
  const span = Math.max(1, t1 - t0);
  const bar = (a, b, cls, label) => (a ? `<div class="seg ${cls}" style="left:${(100 * (a - t0)) / span}%;width:${Math.max(0.5, (100 * ((b || t1) - a)) / span)}%" title="${label}"></div>` : '');
  const waited = (j.start_time || t1) - (j.eligible_time || t0);
  return `<div class="timeline">${bar(t0, j.start_time || t1, 'wait', 'waiting')}${bar(j.start_time, j.end_time, 'run', 'running')}</div>
    <ol class="marks">${marks.map(([k, t]) => `<li class="${t ? '' : 'todo'}"><b>${k}</b> ${t ? fmtTime(t) : '—'}</li>`).join('')}</ol>
    <p class="hint">waited ${fmtDuration(waited)}${j.start_time ? `, ran ${fmtDuration((j.end_time || now()) - j.start_time)}` : ''}</p>`;
}

function placement(j) {
  const nodes = gpusByNode(j.gpus_by_node);
  if (!nodes.length) return `<p class="hint">${j.state === 'PENDING' ? 'not placed yet' : esc(j.nodelist || 'no nodes')}</p>`;
  return `<div class="placement">${nodes.map(([n, g]) => `<div class="pnode"><b>${esc(n)}</b><span>GPU ${g.map((x) => esc(x)).join(', ')}</span></div>`).join('')}</div>`;
}

function spec(j) {
  const rows = Object.entries(j.spec || {}).filter(([k]) => !HIDDEN_SPEC.has(k))
    .map(([k, v]) => `<tr><th>${esc(k)}</th><td>${esc(typeof v === 'object' ? JSON.stringify(v) : v)}</td></tr>`);
  const extra = [['priority', j.priority], ['reason', j.reason], ['exit code', j.exit_code], ['restarts', j.restarts], ['peak memory MiB', j.peak_mem_mib]]
    .filter(([, v]) => v != null).map(([k, v]) => `<tr><th>${k}</th><td>${esc(v)}</td></tr>`);
  const script = j.spec?.script ? `<details><summary>script</summary><pre>${esc(j.spec.script)}</pre></details>` : '';
  return `<table class="kv">${extra.join('')}${rows.join('')}</table>${script}`;
}

async function output(root, id) {
  const el = root.querySelector('#output');
  try {
    const o = await api(`/v1/jobs/${id}/output?lines=40`);
    el.innerHTML = o.lines != null
      ? `<p class="hint">${esc(o.path)}</p><pre class="out">${esc(o.lines) || '<i>(empty)</i>'}</pre>`
      : `<p class="hint">${esc(o.path)}: ${esc(o.unavailable)}</p>`;
  } catch (e) {
    el.innerHTML = `<p class="hint denied">${esc(e.status === 403 ? 'Output is shown to the job\'s owner only.' : e.message)}</p>`;
  }
}

export async function renderJob(root, id) {
  let j = store.jobs.get(id);
  try {
    j = (await api(`/v1/jobs/${id}`)) || j;
    j = j.job || j;
  } catch (e) {
    if (!j) {
      root.innerHTML = `<h1>Job ${esc(id)}</h1><p class="hint">${esc(e.message)}</p>`;
      return;
    }
  }
  const why = j.state === 'PENDING'
    ? `<section class="panel"><h3>Why it waits</h3><p><span class="reason">${esc(j.reason)}</span></p>${j.why ? `<p>${esc(readableTimes(j.why))}</p>` : ''}${j.expected_start ? `<p>Expected to start ${fmtTime(j.expected_start)}.</p>` : ''}</section>` : '';
  root.dataset.jobState = j.state;
  root.innerHTML = `<p><a href="#/queue">← queue</a></p><h1>Job ${esc(jobLabel(j))} <small>${esc(j.spec?.name || '')}</small> ${stateBadge(j.state)}</h1>
    <div class="stats"><div class="stat"><div class="v">${fmtNum(j.ngpus)}</div><div class="l">GPUs</div></div>
    <div class="stat"><div class="v">${fmtNum(j.nnodes)}</div><div class="l">nodes</div></div>
    <div class="stat"><div class="v">${esc(j.spec?.user || '')}</div><div class="l">user</div></div>
    <div class="stat"><div class="v">${esc(j.spec?.account || '')}</div><div class="l">account</div></div></div>
    ${why}<div class="cols"><section class="panel"><h3>Timeline</h3>${timeline(j)}</section>
    <section class="panel"><h3>Nodes and GPUs</h3>${placement(j)}</section></div>
    <section class="panel"><h3>Output</h3><div id="output"><p class="hint">loading…</p></div></section>
    <section class="panel"><h3>Spec</h3>${spec(j)}</section>`;
  await output(root, id);
}

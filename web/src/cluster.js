// Cluster: the GPU map. Every node a tile grouped under its leaf switch,
// every GPU a cell coloured by the account (or the job) holding it; nodes
// out of service are marked with their state and reason. At 1,024 nodes x 8
// GPUs that is ~10,000 cells: built as one string, with hover handled once
// for the whole map and a job's cells highlighted through a style rule.
import { store } from './store.js';
import { esc, colourMap, jobColour, gpusByNode, holdsGpus, jobLabel, fmtNum, fmtDuration, now } from './util.js';

const view = { by: 'account', part: '', pinned: null };

const UNAVAILABLE = /^(DOWN|DRAIN|FAIL|FUTURE)/;

function gpuOwners() {
  const owners = new Map(); // node -> array of jobs by GPU index
  for (const j of store.jobs.values()) {
    if (!holdsGpus(j) || !j.gpus_by_node) continue;
    for (const [node, idx] of gpusByNode(j.gpus_by_node)) {
      let a = owners.get(node);
      if (!a) owners.set(node, (a = []));
      for (const i of idx) a[i] = j;
    }
  }
  return owners;
}

export function accountColours() {
  const names = new Set(store.shares.filter((s) => !s.user && s.account !== 'root').map((s) => s.account));
  for (const j of store.jobs.values()) if (j.spec?.account) names.add(j.spec.account);
  return colourMap(names);
}

// One class per account colour (a style rule each) instead of a style
// attribute on each of thousands of cells: half the map's build time.
function accountRules(colours) {
  colours.index = new Map();
  let css = '#gpumap i.ax{background:#888}';
  [...colours].forEach(([name, c], k) => {
    colours.index.set(name, k);
    css += `#gpumap i.a${k}{background:${c}}`;
  });
  let s = document.getElementById('acc');
  if (!s) {
    s = document.createElement('style');
    s.id = 'acc';
    document.head.append(s);
  }
  if (s.textContent !== css) s.textContent = css;
}

function totals() {
  const t = { gpus: 0, used: 0, down: 0, free: 0, running: 0, pending: 0 };
  for (const n of store.nodes) {
    t.gpus += n.gpus || 0;
    t.used += n.gpus_alloc || 0;
    if (UNAVAILABLE.test(n.state)) t.down += (n.gpus || 0) - (n.gpus_alloc || 0);
  }
  t.free = t.gpus - t.used - t.down;
  for (const j of store.jobs.values()) {
    if (j.state === 'RUNNING') t.running++;
    else if (j.state === 'PENDING') t.pending++;
  }
  return t;
}

function summary(t) {
  const card = (label, v, cls, sub) =>
    `<div class="stat ${cls}"><div class="v">${fmtNum(v)}</div><div class="l">${label}</div>${sub ? `<div class="s">${sub}</div>` : ''}</div>`;
  const p = (x) => (t.gpus ? `${((100 * x) / t.gpus).toFixed(0)}%` : '');
  return `<div class="stats" id="totals">
    ${card('GPUs', t.gpus, '', `${store.nodes.length} nodes`)}
    ${card('in use', t.used, 'used', p(t.used))}
    ${card('free', t.free, 'free', p(t.free))}
    ${card('down / drained', t.down, 'down', p(t.down))}
    ${card('running jobs', t.running, '', '')}
    ${card('pending jobs', t.pending, 'pend', '')}</div>`;
}

function partitionBar() {
  const chips = store.partitions.map((p) => {
    const on = view.part === p.name ? ' on' : '';
    const use = p.ngpus ? Math.round((100 * (p.gpus_alloc || 0)) / p.ngpus) : 0;
    return `<button class="chip${on}" data-part="${esc(p.name)}" title="${esc(p.nodelist)}">
      ${esc(p.name)}${p.up ? '' : ' <b class="warn">DOWN</b>'}
      <span class="mini"><span style="width:${use}%"></span></span>
      <small>${fmtNum(p.gpus_alloc || 0)}/${fmtNum(p.ngpus || 0)}</small></button>`;
  });
  return `<div class="toolbar"><div class="chips" role="group" aria-label="partition">
      <button class="chip${view.part ? '' : ' on'}" data-part="">all partitions</button>${chips.join('')}</div>
    <div class="seg" role="group" aria-label="colour by">
      <button data-by="account" class="${view.by === 'account' ? 'on' : ''}">by account</button>
      <button data-by="job" class="${view.by === 'job' ? 'on' : ''}">by job</button></div></div>`;
}

function legend(colours, owners, hidden, off) {
  const used = new Map();
  for (const a of owners.values()) for (const j of a) if (j) used.set(j.spec?.account, (used.get(j.spec?.account) || 0) + 1);
  const items = [...colours].filter(([n]) => used.has(n)).map(([n, c]) =>
    `<span class="lg"><i style="background:${c}"></i>${esc(n)} <small>${used.get(n)}</small></span>`);
  return `<div class="legend">${items.join('')}
    <span class="lg"><i class="free"></i>free</span>${hidden ? '<span class="lg"><i class="hidden"></i>in use (not visible to you)</span>' : ''}
    ${off ? '<span class="lg"><i class="off"></i>unavailable</span>' : ''}</div>`;
}

function problems() {
  const bad = store.nodes.filter((n) => UNAVAILABLE.test(n.state));
  if (!bad.length) return '';
  const rows = bad.slice(0, 50).map((n) =>
    `<li data-node="${esc(n.name)}"><b>${esc(n.name)}</b> <span class="badge st-${esc(n.state.toLowerCase())}">${esc(n.state)}</span> <span class="reason">${esc(n.reason || 'no reason given')}</span></li>`);
  const more = bad.length > 50 ? `<li>… and ${bad.length - 50} more</li>` : '';
  return `<section class="panel problems" id="unavailable"><h3>Unavailable nodes (${bad.length})</h3><ul>${rows.join('')}${more}</ul></section>`;
}

function tile(n, owned, colours, inPart) {
  const st = n.state || 'UNKNOWN', off = UNAVAILABLE.test(st);
  let cells = '';
  for (let g = 0; g < (n.gpus || 0); g++) {
    const j = owned?.[g];
    if (j && view.by === 'job') cells += `<i data-j="${j.job_id}" style="background:${jobColour(j.job_id)}"></i>`;
    else if (j) cells += `<i data-j="${j.job_id}" class="a${colours.index.get(j.spec?.account) ?? 'x'}"></i>`;
    else cells += `<i class="${off ? 'off' : 'free'}"></i>`;
  }
  // GPUs the node counts as allocated that no visible job holds: other users' (PrivateData)
  const hidden = (n.gpus_alloc || 0) - (owned ? owned.filter(Boolean).length : 0);
  if (hidden > 0) {
    let k = 0;
    cells = cells.replace(/<i class="(free|off)"><\/i>/g, (m) => (k++ < hidden ? '<i class="hidden"></i>' : m));
  }
  const cls = `node s-${st.toLowerCase().replace(/[^a-z]/g, '')}${inPart ? '' : ' dim'}`;
  const reason = off ? `<div class="why">${esc(st)}${n.reason ? ': ' + esc(n.reason) : ''}</div>` : '';
  return `<div class="${cls}" data-node="${esc(n.name)}" title="${esc(n.name)} ${esc(st)}${n.reason ? ' — ' + esc(n.reason) : ''}"><div class="nn">${esc(n.name)}</div><div class="g g${n.gpus > 8 ? 16 : 8}">${cells}</div>${reason}</div>`;
}

function groups() {
  const sw = new Map();
  for (const t of store.topo?.nodes || []) sw.set(t.name, t.switch || '');
  const out = new Map();
  for (const n of store.nodes) {
    const s = sw.get(n.name) || '';
    if (!out.has(s)) out.set(s, []);
    out.get(s).push(n);
  }
  return out;
}

// Switch groups as markup, taken from the front of `rest` until `max` nodes.
function takeGroups(rest, max, owners, colours) {
  const inPart = (n) => !view.part || (n.partitions || '').split(',').includes(view.part);
  let html = '', count = 0;
  while (rest.length && count < max) {
    const [sw, nodes] = rest.shift();
    const used = nodes.reduce((a, n) => a + (n.gpus_alloc || 0), 0), all = nodes.reduce((a, n) => a + (n.gpus || 0), 0);
    const head = sw ? `<div class="swh"><span>switch ${esc(sw)}</span><small>${used}/${all}</small></div>` : '';
    html += `<div class="sw">${head}<div class="tiles">${nodes.map((n) => tile(n, owners.get(n.name), colours, inPart(n))).join('')}</div></div>`;
    count += nodes.length;
  }
  return html;
}

// A large map is built a screenful first, then the rest in steps of
// CHUNK_NODES between frames: the first screen paints without waiting for
// ~10,000 off-screen cells, and the page stays responsive meanwhile.
const CHUNK_NODES = 256;
let generation = 0;

function appendRest(m, rest, gen, owners, colours) {
  const step = () => {
    if (gen !== generation || !m.isConnected) return; // a newer render took over
    m.insertAdjacentHTML('beforeend', takeGroups(rest, CHUNK_NODES, owners, colours));
    if (rest.length) setTimeout(step, 0);
    else markOnce('px-map-complete');
  };
  requestAnimationFrame(() => setTimeout(step, 0));
}

// The first task after the next frame: what was built is on the screen
// (queued ahead of the map's next step, which waits for the same frame).
function markOnce(name) {
  if (!performance.getEntriesByName(name).length)
    requestAnimationFrame(() => setTimeout(() => performance.mark(name), 0));
}

function jobCard(j, colours) {
  if (!j) return '<div class="hint">Point at a GPU to see its job; click to keep it here.</div>';
  const c = view.by === 'job' ? jobColour(j.job_id) : colours.get(j.spec?.account);
  const run = j.start_time ? fmtDuration(now() - j.start_time) : '';
  return `<div class="jobcard"><i style="background:${c}"></i><a href="#/job/${j.job_id}"><b>${esc(jobLabel(j))}</b> ${esc(j.spec?.name || '')}</a>
    <span>${esc(j.spec?.user || '')} · ${esc(j.spec?.account || '')} · ${esc(j.spec?.partition || '')}</span>
    <span>${fmtNum(j.ngpus)} GPUs on ${esc(j.nodelist || '')}</span><span>running ${run}</span></div>`;
}

// What the map shows; when a change leaves it alone only the totals move.
function mapKey() {
  let k = `${view.by}|${view.part}|${view.pinned}|`;
  for (const n of store.nodes) k += `${n.name}:${n.state}:${n.gpus_alloc}:${n.reason || ''};`;
  for (const j of store.jobs.values()) if (holdsGpus(j)) k += `${j.job_id}@${j.gpus_by_node};`;
  return k;
}

export function renderCluster(root, live = false) {
  const key = mapKey();
  if (live && root.querySelector('#gpumap') && root.dataset.mapKey === key) {
    root.querySelector('#totals').outerHTML = summary(totals());
    return;
  }
  root.dataset.mapKey = key;
  performance.mark('px-map-start');
  const owners = gpuOwners(), colours = accountColours();
  accountRules(colours);
  const title = store.topo?.cluster ? `Cluster <small>${esc(store.topo.cluster)}</small>` : 'Cluster';
  const rest = [...groups()], gen = ++generation;
  const mapHtml = `<div class="map${store.nodes.length > 256 ? ' dense' : ''}" id="gpumap">${takeGroups(rest, CHUNK_NODES, owners, colours)}</div>`;
  root.innerHTML = `<h1>${title}</h1>${summary(totals())}${partitionBar()}${problems()}
    <section class="panel"><div class="maphead">${legend(colours, owners, store.topo?.private_jobs, store.nodes.some((n) => UNAVAILABLE.test(n.state)))}<div id="jobinfo">${jobCard(store.jobs.get(view.pinned), colours)}</div></div>${mapHtml}</section>`;
  highlight(view.pinned);
  performance.mark('px-map-done');
  const m = root.querySelector('#gpumap');
  markOnce('px-map-painted'); // the first screen of the map (bench_ui)
  if (rest.length) appendRest(m, rest, gen, owners, colours);
  else markOnce('px-map-complete');
  m.addEventListener('mouseover', (e) => {
    const id = e.target.dataset?.j;
    if (!id || view.pinned) return;
    highlight(id);
    root.querySelector('#jobinfo').innerHTML = jobCard(store.jobs.get(Number(id)), colours);
  });
  m.addEventListener('click', (e) => {
    const id = e.target.dataset?.j;
    view.pinned = id && view.pinned !== Number(id) ? Number(id) : null;
    highlight(view.pinned);
    root.querySelector('#jobinfo').innerHTML = jobCard(store.jobs.get(view.pinned), colours);
  });
  root.querySelectorAll('[data-part]').forEach((b) => b.addEventListener('click', () => {
    view.part = b.dataset.part;
    renderCluster(root);
  }));
  root.querySelectorAll('[data-by]').forEach((b) => b.addEventListener('click', () => {
    view.by = b.dataset.by;
    renderCluster(root);
  }));
}

// One style rule outlines every cell of the job under the pointer.
function highlight(id) {
  let s = document.getElementById('hl');
  if (!s) {
    s = document.createElement('style');
    s.id = 'hl';
    document.head.append(s);
  }
  s.textContent = id ? `#gpumap i[data-j="${Number(id)}"]{outline:2px solid #111;outline-offset:-1px;z-index:1}` : '';
}

// The cluster as the browser knows it, kept current from the API's watch
// stream (GET /v1/watch: a long poll that answers with the jobs changed
// since a journal sequence number as soon as there are any). A change that
// moves the sequence without a job (a drained node, a partition brought
// down) refreshes the nodes; nodes, partitions and shares are also re-read
// every few seconds, as agents' heartbeats are not journaled.
import { api, AuthError } from './api.js';

const JOB_LINGER_S = 300; // as squeue: an ended job stays listed 5 minutes

export const store = {
  me: null, topo: null, nodes: [], partitions: [], shares: [], jobs: new Map(), seq: 0,
  live: false, listeners: new Set(), lastChange: 0,
};

export function subscribe(fn) {
  store.listeners.add(fn);
  return () => store.listeners.delete(fn);
}

let notifyQueued = false;
function notify(what) {
  store.lastChange = performance.now();
  if (notifyQueued) return;
  notifyQueued = true;
  requestAnimationFrame(() => {
    notifyQueued = false;
    for (const fn of store.listeners) fn(what);
  });
}

function mergeJobs(list) {
  for (const j of list) store.jobs.set(j.job_id, j);
  const cut = Date.now() / 1000 - JOB_LINGER_S;
  if (store.jobs.size > 20000)
    for (const [id, j] of store.jobs) if (j.end_time && j.end_time < cut) store.jobs.delete(id);
}

async function refreshNodes() {
  const [n, p] = await Promise.all([api('/v1/nodes'), api('/v1/partitions')]);
  store.nodes = n.nodes || [];
  store.partitions = p.partitions || [];
}

async function refreshShares() {
  store.shares = (await api('/v1/shares')).shares || [];
}

// First what the GPU map needs (the jobs holding GPUs: a fraction of a
// large queue), then every job in the background. A job the watch stream
// updated meanwhile keeps its newer version.
// What the map and its job card read of a job (the full listing follows).
const MAP_FIELDS = 'job_id,array_job_id,array_task_id,state,nodelist,nnodes,ngpus,gpus_by_node,start_time,spec';

export async function load() {
  performance.mark('px-load-start');
  const [me, topo, running] = await Promise.all([
    api('/v1/whoami'), api('/v1/ui/topology'), api(`/v1/jobs?state=RUNNING,COMPLETING&fields=${MAP_FIELDS}`),
    refreshNodes(), refreshShares(),
  ]);
  performance.mark('px-load-fetched');
  store.me = me;
  store.topo = topo;
  mergeJobs(running.jobs || []);
  store.seq = running.seq || 0;
  store.live = true;
  store.complete = false;
  // when the first page has painted (a large map finishes building first):
  // parsing a large queue holds the main thread
  const idle = window.requestIdleCallback || ((f) => setTimeout(f, 50)); // Safari has none
  idle(loadRest, { timeout: 3000 });
}

const touched = new Set(); // jobs the watch stream updated before the full listing came

async function loadRest() {
  try {
    const all = await api('/v1/jobs');
    for (const j of all.jobs || []) if (!touched.has(j.job_id)) store.jobs.set(j.job_id, j);
  } catch (e) {
    console.warn(`job listing: ${e.message}`);
  }
  store.complete = true;
  touched.clear();
  notify('jobs');
}

let onAuthLost = () => {};
export function startLive(authLost) {
  onAuthLost = authLost;
  watchLoop();
  setInterval(() => refreshNodes().then(() => notify('nodes')).catch(() => {}), 5000);
  setInterval(() => refreshShares().then(() => notify('shares')).catch(() => {}), 15000);
}

function setLive(v) {
  if (store.live === v) return;
  store.live = v;
  notify('live');
}

const MIN_WATCH_GAP_MS = 200; // coalesces a burst of changes into one repaint

async function watchLoop() {
  for (let backoff = 500, last = 0; ;) {
    const gap = performance.now() - last;
    if (gap < MIN_WATCH_GAP_MS) await new Promise((r) => setTimeout(r, MIN_WATCH_GAP_MS - gap));
    last = performance.now();
    try {
      const w = await api(`/v1/watch?after=${store.seq}&timeout=20`);
      setLive(true);
      backoff = 500;
      if (w.seq === store.seq) continue;
      store.seq = w.seq;
      mergeJobs(w.jobs || []);
      if (!store.complete) for (const j of w.jobs || []) touched.add(j.job_id);
      // job starts and ends move GPUs; drains move no job: re-read the nodes
      await refreshNodes();
      notify('jobs');
    } catch (e) {
      if (e instanceof AuthError) return onAuthLost(e.message);
      setLive(false);
      await new Promise((r) => setTimeout(r, backoff));
      backoff = Math.min(backoff * 2, 8000);
    }
  }
}

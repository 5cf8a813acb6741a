// Small helpers shared by the pages: escaping, formatting, colours.

const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
// Every value from the API goes into markup through esc().
export const esc = (v) => String(v ?? '').replace(/[&<>"']/g, (c) => ESC[c]);

export const now = () => Date.now() / 1000;

export function fmtDuration(s) {
  if (s == null || !isFinite(s)) return '';
  s = Math.max(0, Math.round(s));
  const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60), sec = s % 60;
  if (d) return `${d}d ${h}h`;
  if (h) return `${h}h ${String(m).padStart(2, '0')}m`;
  if (m) return `${m}m ${String(sec).padStart(2, '0')}s`;
  return `${sec}s`;
}

export function fmtTime(t) {
  if (!t) return '';
  const d = new Date(t * 1000), today = new Date();
  const hm = d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  if (d.toDateString() === today.toDateString()) return hm;
  return `${d.toLocaleDateString([], { month: 'short', day: 'numeric' })} ${hm}`;
}

export const fmtNum = (n, digits = 0) =>
  n == null ? '' : Number(n).toLocaleString([], { maximumFractionDigits: digits });

export const pct = (x) => `${(100 * (x || 0)).toFixed(1)}%`;

// Colours that stay apart on a light background and for the common forms
// of colour blindness (Okabe-Ito and Tableau's, interleaved); an account
// keeps its colour as long as the set of accounts does not change.
const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#b07aa1', '#edc948',
  '#9c755f', '#ff9da7', '#0072b2', '#d55e00', '#009e73', '#cc79a7', '#56b4e9', '#8c6d31', '#637939'];

export function colourMap(names) {
  const m = new Map();
  [...new Set(names)].sort().forEach((n, i) => m.set(n, PALETTE[i % PALETTE.length]));
  return m;
}

// A job's own colour (colour-by-job mode): spread by a multiplicative hash.
export function jobColour(id) {
  const hue = (Number(id) * 137.508) % 360;
  return `hsl(${hue.toFixed(0)} 62% 52%)`;
}

export const STATE_SHORT = {
  PENDING: 'PD', RUNNING: 'R', COMPLETING: 'CG', COMPLETED: 'CD', FAILED: 'F', CANCELLED: 'CA',
  TIMEOUT: 'TO', OUT_OF_MEMORY: 'OOM', NODE_FAIL: 'NF', PREEMPTED: 'PR', REQUEUED: 'RQ',
};

export const isActive = (j) => j.state === 'RUNNING' || j.state === 'COMPLETING' || j.state === 'PENDING';
export const holdsGpus = (j) => j.state === 'RUNNING' || j.state === 'COMPLETING';

// "dev1:0,1;dev2:3" -> [["dev1",[0,1]],["dev2",[3]]]
export function gpusByNode(s) {
  if (!s) return [];
  return s.split(';').filter(Boolean).map((part) => {
    const i = part.lastIndexOf(':');
    const idx = part.slice(i + 1).split(',').filter((x) => x !== '').map(Number);
    return [part.slice(0, i), idx];
  });
}

// The API leaves zero-valued members out: a task 0 has no array_task_id.
const NO_TASK = 4294967295;
export function jobLabel(j) {
  if (!j.array_job_id) return String(j.job_id);
  if (j.array_task_id === NO_TASK) return `${j.array_job_id}_[${j.array_pending || ''}]`;
  return `${j.array_job_id}_${j.array_task_id ?? 0}`;
}

export function stateBadge(state) {
  return `<span class="badge st-${esc(String(state).toLowerCase())}">${esc(state)}</span>`;
}

// Shows a short message at the bottom of the page.
export function toast(msg) {
  let t = document.getElementById('toast');
  if (!t) {
    t = document.createElement('div');
    t.id = 'toast';
    t.setAttribute('role', 'status');
    document.body.append(t);
  }
  t.textContent = msg;
  t.className = 'show';
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => (t.className = ''), 4000);
}

// "expected start 1796323800" (the server's why text) -> a time a person reads
export const readableTimes = (s) => String(s ?? '').replace(/\b1\d{9}\b/g, (t) => fmtTime(Number(t)));

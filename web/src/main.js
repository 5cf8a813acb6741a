// The dashboard: sign-in, the page router (#/cluster, #/queue, #/job/ID,
// #/share, #/usage) and the live repaint when the store changes.
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { token, takeTokenFromUrl, AuthError } from './api.js';
import { store, load, startLive, subscribe } from './store.js';
import { esc } from './util.js';
import { renderCluster } from './cluster.js';
import { renderQueue } from './queue.js';
import { renderJob } from './job.js';
import { renderShare } from './share.js';
import { renderUsage } from './usage.js';

const main = document.getElementById('main');

// At most one call per `ms`, the last one always made: a busy cluster's
// changes arrive every 200 ms, and rebuilding a 1,024-node map each time
// would keep the browser busy; a change still shows within a second.
function throttle(fn, ms) {
  let last = 0, timer = null;
  return (...args) => {
    clearTimeout(timer);
    const wait = last + ms - performance.now();
    if (wait <= 0) {
      last = performance.now();
      fn(...args);
    } else timer = setTimeout(() => { last = performance.now(); fn(...args); }, wait);
  };
}

const PAGES = {
  // (the late call checks the page is still the map)
  cluster: { render: renderCluster, live: throttle((root) => route().page === 'cluster' && renderCluster(root, true), 600) },
  queue: { render: renderQueue, live: (root) => renderQueue(root, true) },
  share: { render: renderShare, live: (root, what) => what !== 'jobs' && renderShare(root) },
  usage: { render: renderUsage, live: null },
  services: { render: (root) => (root.innerHTML = '<h1>Services</h1><section class="panel"><p class="hint">Long-running services (replicas, health, endpoints, scaling) will show here once the server runs them.</p></section>'), live: null },
};

function route() {
  const [, page = 'cluster', arg] = location.hash.match(/^#\/(\w+)(?:\/(\d+))?/) || [];
  return { page, arg: arg && Number(arg) };
}

function show() {
  const { page, arg } = route();
  document.querySelectorAll('nav a').forEach((a) => a.classList.toggle('on', a.dataset.page === (page === 'job' ? 'queue' : page)));
  main.dataset.page = page;
  const p = PAGES[page];
  const done = page === 'job' ? renderJob(main, arg) : p ? p.render(main) : (main.innerHTML = '<h1>Not found</h1>');
  Promise.resolve(done).then(() => (main.dataset.rendered = page), fail);
}

function repaint(what) {
  document.getElementById('live').className = store.live ? 'live' : 'stale';
  document.getElementById('live').title = store.live ? 'following changes' : 'reconnecting';
  if (what === 'live') return;
  const { page, arg } = route();
  const p = PAGES[page];
  if (p?.live) p.live(main, what);
  else if (page === 'job' && what === 'jobs' && store.jobs.get(arg)?.state !== main.dataset.jobState) renderJob(main, arg);
}

function login(message) {
  token.clear();
  document.body.classList.add('signed-out');
  main.innerHTML = `<section class="login panel"><h1>Sign in to Phalanx</h1>
    ${message ? `<p class="error">${esc(message)}</p>` : ''}
    <p>Run <code>phalanx ui</code> on a machine that reaches the server: it prints this page's address with a sign-in link for you.
    Or paste an API token (<code>phalanx token</code>):</p>
    <form id="loginform"><textarea id="tok" rows="3" placeholder="eyJhbGciOi…" aria-label="API token" spellcheck="false"></textarea>
    <button type="submit">Sign in</button></form></section>`;
  main.querySelector('#loginform').addEventListener('submit', (e) => {
    e.preventDefault();
    const t = main.querySelector('#tok').value.trim();
    if (!t) return;
    token.set(t);
    start();
  });
}

function fail(e) {
  if (e instanceof AuthError) return login(e.message);
  console.warn(e);
  main.insertAdjacentHTML('afterbegin', `<p class="error">${esc(e.message)}</p>`);
}

let started = false;
async function start() {
  try {
    await load();
  } catch (e) {
    return e instanceof AuthError ? login(e.message) : fail(e);
  }
  document.body.classList.remove('signed-out');
  const me = store.me;
  document.getElementById('who').innerHTML = `${esc(me.user)} <small>${esc(me.roles.filter((r) => r !== 'user').join(', ') || 'user')}</small>`;
  if (!started) {
    started = true;
    subscribe(repaint);
    startLive(login);
    window.addEventListener('hashchange', show);
    document.getElementById('signout').addEventListener('click', () => login('signed out'));
  }
  show();
}

takeTokenFromUrl();
if (token.get()) start();
else login();

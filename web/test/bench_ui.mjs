// The dashboard's benchmark (bench/bench_ui.sh starts the server and passes
// SOCK, the server's Unix socket, LINK, root's sign-in link, and NODES, JOBS):
// registers NODES nodes as their agents would (no agent process: the map
// needs the nodes' state, not jobs really running), submits JOBS jobs in
// batches, waits for the scheduler to place what fits, then in headless
// Chromium measures
//   ui_first_render_ms    sign-in link opened (fresh browser context, cold
//                         cache) -> the GPU map's first screen painted (its
//                         first 256 nodes; the rest follow between frames);
//                         median of 3
//   ui_map_complete_ms    the same -> every node's tile painted
//   ui_update_latency_ms  job submitted (API, Unix socket) -> its row in the
//                         open queue page; median of 5
//   ui_assets_kib         the dashboard's files as the browser received them
//                         (gzip'd bodies: HTML, scripts, style, icon) after
//                         visiting the map and the usage page (its charts)
// and, for reading those figures: ui_map_api_kib (the API data read before
// the map painted: the rest of the queue comes after), ui_blank_page_ms (a
// fresh context opening a tiny file: the browser's own floor here).
import http from 'node:http';
import { loadavg } from 'node:os';
import puppeteer from 'puppeteer-core';

const SOCK = process.env.SOCK, LINK = process.env.LINK;
const NODES = Number(process.env.NODES || 1024), JOBS = Number(process.env.JOBS || 10000);
const ACCOUNTS = ['vision', 'speech', 'nlp', 'robotics', 'rl', 'genomics', 'climate', 'ops'];
const BASE = LINK.replace(/#.*/, '');

function call(method, path, body) {
  return new Promise((resolve, reject) => {
    const data = body ? JSON.stringify(body) : '';
    const req = http.request({ socketPath: SOCK, method, path, agent: keepAlive,
      headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        if (res.statusCode >= 300) reject(new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 200)}`));
        else resolve(text ? JSON.parse(text) : null);
      });
    });
    req.on('error', reject);
    req.end(data);
  });
}
const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 8 });
const name = (i) => `g${String(i + 1).padStart(4, '0')}`;
const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A seeded generator: the same jobs every run.
let seed = 42;
const rnd = (n) => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) % n;

function spec(i) {
  const big = rnd(10) === 0;
  return {
    name: `bench-${i}`, account: ACCOUNTS[rnd(ACCOUNTS.length)], time_limit_s: 3600 * (1 + rnd(8)),
    nodes_min: big ? 2 + rnd(3) : 1, gpus_per_node: big ? 8 : [1, 2, 4, 8][rnd(4)],
    script: '#!/bin/sh\ntrue\n', workdir: '/tmp',
  };
}

// What slurm.conf gives each node (8 h100s): a node reporting fewer is drained.
const GPUS = (n) => Array.from({ length: 8 }, (_, k) => ({ index: k, uuid: `GPU-BENCH-${n}-${k}`, type: 'h100' }));

async function setup() {
  const regs = [];
  for (let i = 0; i < NODES; i++)
    regs.push(call('POST', '/v1/agent/register', { node: name(i), addr: '127.0.0.1', cpus: 64, mem_mib: 524288, gpus: GPUS(i), jobs: [], version: 'bench' }));
  await Promise.all(regs);
  for (let i = 0; i < JOBS; i += 1000) {
    const jobs = [];
    for (let k = i; k < Math.min(JOBS, i + 1000); k++) jobs.push(spec(k));
    await call('POST', '/v1/jobs', { jobs });
  }
  await call('POST', '/v1/jobs', { job: { ...spec(JOBS), name: 'probe', account: 'probe' } });
  // placed: the count of running jobs stops moving
  let last = -1;
  for (let t = 0; t < 120; t++) {
    const r = await call('GET', '/v1/jobs?state=RUNNING&fields=job_id');
    if (r.jobs.length === last && last > 0) return { running: last };
    last = r.jobs.length;
    await sleep(1000);
  }
  throw new Error('the scheduler did not settle');
}

// Everything of /ui/ the browser received, gzip'd bodies (the usage page
// loads the chart library: visit it first).
async function assetKib(page) {
  await page.evaluate(() => { location.hash = '#/usage'; });
  await page.waitForSelector('#gpuh .uplot', { timeout: 30000 });
  return page.evaluate(() => [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')]
    .filter((e) => new URL(e.name).pathname.startsWith('/ui/')).reduce((a, e) => a + e.encodedBodySize, 0) / 1024);
}

async function firstRender(browser, measureAssets) {
  const ctx = await browser.createBrowserContext();
  const page = await ctx.newPage();
  await page.setViewport({ width: 1280, height: 800 });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const t0 = performance.now();
  await page.goto(LINK);
  await page.waitForFunction((n) => document.querySelectorAll('#gpumap .node').length === n &&
    performance.getEntriesByName('px-map-complete').length, { timeout: 60000 }, NODES);
  const wall = performance.now() - t0;
  // from the navigation's start to the map's first screen painted, and to
  // every node's tile painted (the page's clock)
  const [ms, complete] = await page.evaluate(() => ['px-map-painted', 'px-map-complete']
    .map((n) => performance.getEntriesByName(n)[0].startTime));
  const sizes = await page.evaluate((t) => ({
    api: performance.getEntriesByType('resource').filter((e) => new URL(e.name).pathname.startsWith('/v1/') && e.responseEnd <= t)
      .reduce((a, e) => a + e.encodedBodySize, 0) / 1024,
  }), ms);
  const cells = await page.$$eval('#gpumap i[data-j]', (c) => c.length);
  if (measureAssets) sizes.assets = await assetKib(page);
  const marks = await page.evaluate(() => performance.getEntriesByType('mark').map((m) => `${m.name}@${m.startTime.toFixed(0)}`).join(' '));
  console.error(`bench_ui: wall ${wall.toFixed(0)} ms; marks ${marks}`);
  await ctx.close();
  if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
  return { ms, complete, sizes, cells };
}

async function updateLatency(browser) {
  const ctx = await browser.createBrowserContext();
  const page = await ctx.newPage();
  await page.setViewport({ width: 1280, height: 800 });
  await page.goto(LINK);
  await page.waitForFunction(() => document.getElementById('main').dataset.rendered === 'cluster', { timeout: 60000 });
  await page.evaluate(() => { location.hash = '#/queue'; });
  await page.waitForFunction(() => document.querySelector('#more') && !document.querySelector('#more').textContent.includes('Loading'), { timeout: 60000 });
  await page.select('select[data-f="account"]', 'probe'); // a user narrows 10,000 jobs to theirs
  const times = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    const r = await call('POST', '/v1/jobs', { job: { ...spec(JOBS + i), name: `probe-${i}`, account: 'probe' } });
    await page.waitForSelector(`#queue tr[data-job="${r.job_id}"]`, { timeout: 30000 });
    times.push(performance.now() - t0);
  }
  await ctx.close();
  return times;
}

async function blankPage(browser) {
  const runs = [];
  for (let i = 0; i < 3; i++) {
    const ctx = await browser.createBrowserContext();
    const page = await ctx.newPage();
    const t0 = performance.now();
    await page.goto(`${BASE}icon.svg`);
    runs.push(performance.now() - t0);
    await ctx.close();
  }
  return median(runs);
}

const placed = await setup();
const browser = await puppeteer.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'] });
try {
  const runs = [];
  for (let i = 0; i < 3; i++) runs.push(await firstRender(browser, i === 0));
  if (runs[0].cells === 0) throw new Error('no allocated GPU on the map');
  const upd = await updateLatency(browser);
  console.error(`bench_ui: load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}; ${NODES} nodes, ${JOBS + 1} jobs, ${placed.running} running on ${runs[0].cells} GPU cells; ` +
    `first renders ${runs.map((r) => r.ms.toFixed(0)).join(' ')} ms; updates ${upd.map((t) => t.toFixed(0)).join(' ')} ms`);
  console.log(`ui_first_render_ms ${median(runs.map((r) => r.ms)).toFixed(0)} ms`);
  console.log(`ui_map_complete_ms ${median(runs.map((r) => r.complete)).toFixed(0)} ms`);
  console.log(`ui_update_latency_ms ${median(upd).toFixed(0)} ms`);
  console.log(`ui_assets_kib ${runs[0].sizes.assets.toFixed(1)} KiB`);
  console.log(`ui_map_api_kib ${median(runs.map((r) => r.sizes.api)).toFixed(0)} KiB`);
  console.log(`ui_blank_page_ms ${(await blankPage(browser)).toFixed(0)} ms`);
} finally {
  await browser.close();
  keepAlive.destroy();
}

// The dashboard in a real browser (headless Chromium, driven by
// puppeteer-core) against a running `phalanx dev` cluster; started by
// tests/integration/test_ui.sh, which sets up the cluster and passes:
//   UI_LINK      root's sign-in link (`phalanx ui`)
//   ALICE_TOKEN  a token of a user who owns no job
//   GANG_ID      a running 2-node gang of account vision whose output has SECRET
//   SECRET       a line only the gang's owner may read
//   ARTIFACTS    where the screenshots go
//   CHROMIUM     the browser (default /usr/bin/chromium)
// Prints "ok   ..." / "FAIL ..." lines and exits non-zero on any failure.
import puppeteer from 'puppeteer-core';
import { mkdirSync } from 'node:fs';

const env = (k, d) => process.env[k] ?? d ?? (() => { throw new Error(`${k} not set`); })();
const LINK = env('UI_LINK'), ALICE = env('ALICE_TOKEN'), GANG = Number(env('GANG_ID'));
const SECRET = env('SECRET'), OUT = env('ARTIFACTS'), BASE = LINK.replace(/#.*/, '');
mkdirSync(OUT, { recursive: true });

let fails = 0;
const ok = (m) => console.log(`ok   ${m}`);
const fail = (m) => { console.log(`FAIL ${m}`); fails++; };
const check = (cond, m) => (cond ? ok(m) : fail(m));

const browser = await puppeteer.launch({
  executablePath: env('CHROMIUM', '/usr/bin/chromium'),
  headless: true,
  args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
});

// Every console error and uncaught exception fails the test, except the
// 403 a user gets for another user's output (what rule output-owner says).
const errors = [];
function watchConsole(page, who) {
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    const url = m.location()?.url || '';
    if (who === 'alice' && /\/output\?/.test(url) && /403/.test(m.text())) return;
    errors.push(`${who}: ${m.text()} ${url}`);
  });
  page.on('pageerror', (e) => errors.push(`${who}: uncaught ${e.message}`));
}

async function open(page, hash) {
  await page.evaluate((h) => { location.hash = h; }, hash);
  const name = hash.split('/')[1];
  await page.waitForFunction((n) => document.getElementById('main').dataset.rendered === n, { timeout: 10000 }, name);
}

async function shoot(page, name) {
  for (const [w, h, tag] of [[1280, 800, 'desktop'], [390, 844, 'phone']]) {
    await page.setViewport({ width: w, height: h });
    await new Promise((r) => setTimeout(r, 150));
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    check(overflow <= 0, `${name} fits a ${w}px-wide viewport (overflow ${overflow}px)`);
    await page.screenshot({ path: `${OUT}/${name}-${tag}.png` });
  }
  await page.setViewport({ width: 1280, height: 800 });
}

// The API as the signed-in user, from inside the page.
const apiCall = (page, method, path, body) => page.evaluate(async (m, p, b) => {
  const r = await fetch(p, { method: m, headers: { Authorization: `Bearer ${sessionStorage.getItem('phalanx.token')}`, 'Content-Type': 'application/json' }, body: b ? JSON.stringify(b) : undefined });
  return { status: r.status, body: await r.json() };
}, method, path, body);

try {
  const page = await browser.newPage();
  watchConsole(page, 'root');
  await page.setViewport({ width: 1280, height: 800 });

  // 1. Sign in through the link `phalanx ui` printed; the token leaves the address bar.
  await page.goto(LINK);
  await page.waitForFunction(() => document.getElementById('main').dataset.rendered === 'cluster', { timeout: 15000 });
  const who = await page.$eval('#who', (e) => e.textContent);
  check(/root/.test(who), `signed in with the link of phalanx ui (header says "${who.trim()}")`);
  check(!page.url().includes('token='), 'the token is gone from the address bar');

  // 2. The GPU map: the gang's 16 GPUs in its account's colour.
  const gang = await page.evaluate((id) => {
    const cells = [...document.querySelectorAll(`#gpumap i[data-j="${id}"]`)];
    const lg = [...document.querySelectorAll('.legend .lg')].find((e) => e.textContent.trim().startsWith('vision'));
    const colour = lg && getComputedStyle(lg.querySelector('i')).backgroundColor;
    return { n: cells.length, colours: [...new Set(cells.map((c) => getComputedStyle(c).backgroundColor))], colour };
  }, GANG);
  check(gang.n === 16, `the gang's GPUs are on the map (${gang.n} of 16 cells)`);
  check(gang.colour && gang.colours.length === 1 && gang.colours[0] === gang.colour,
    `the gang's cells are in account vision's colour (${gang.colours.join(',')} vs legend ${gang.colour})`);
  await page.hover(`#gpumap i[data-j="${GANG}"]`);
  const card = await page.$eval('#jobinfo', (e) => e.textContent);
  check(card.includes(String(GANG)) && card.includes('vision'), 'pointing at a GPU shows its job');
  await shoot(page, 'cluster');

  // 3. A drained node shows its reason, without a reload.
  const reason = 'ui-test: fan 2 failed';
  const d = await apiCall(page, 'POST', '/v1/nodes/dev4/drain', { reason });
  check(d.status === 200, `drained dev4 through the API (${d.status})`);
  let t0 = Date.now();
  try {
    await page.waitForFunction((r) => document.querySelector('#unavailable')?.textContent.includes(r) &&
      document.querySelector('.node[data-node="dev4"] .why')?.textContent.includes(r), { timeout: 5000 }, reason);
    ok(`the drained node shows its reason on the map (${Date.now() - t0} ms)`);
  } catch { fail('the drained node\'s reason did not show'); }
  await shoot(page, 'cluster-drained');

  // 4. A submitted job appears in the queue without a reload, within 1 s.
  await open(page, '#/queue');
  const marker = await page.evaluate(() => { window.__marker = 1; return 1; });
  const sub = await apiCall(page, 'POST', '/v1/jobs', { job: { name: 'ui-live', account: 'speech', gpus_per_node: 1, time_limit_s: 60, script: '#!/bin/sh\nsleep 20\n', workdir: '/tmp' } });
  t0 = Date.now();
  const id = sub.body.job_id;
  check(sub.status === 201 && id > 0, `submitted job ${id} through the API`);
  try {
    await page.waitForSelector(`#queue tr[data-job="${id}"]`, { timeout: 5000 });
    const ms = Date.now() - t0;
    check(ms <= 1000, `job ${id} shows in the queue without a reload in ${ms} ms (<= 1000)`);
    check(await page.evaluate(() => window.__marker === 1), 'the page was not reloaded');
  } catch { fail(`job ${id} did not show in the queue`); }
  check(marker === 1, 'queue page rendered');
  await shoot(page, 'queue');

  // 5. The fair-share page shows the account tree.
  await open(page, '#/share');
  const tree = await page.$eval('#sharetree', (e) => [...e.querySelectorAll('.fsgroup')].map((g) => g.dataset.account));
  const rows = await page.$$eval('#sharetable tbody tr', (r) => r.map((x) => x.dataset.key));
  check(tree.includes('root') && tree.includes('research'), `fair share: groups under root and research (${tree.join(',')})`);
  check(['research', 'vision', 'speech', 'ops'].every((a) => rows.includes(a)), `fair share: every account in the tree (${rows.length} rows)`);
  await shoot(page, 'share');

  // 6. Usage.
  await open(page, '#/usage');
  await page.waitForSelector('#gpuh .uplot', { timeout: 10000 });
  check(await page.$('#util .uplot') !== null && (await page.$eval('#waits', (e) => e.children.length)) === 7, 'usage: GPU-hours, utilisation and the wait histogram drawn');
  await shoot(page, 'usage');

  // 7. The gang's page: its owner reads its output.
  await open(page, `#/job/${GANG}`);
  await page.waitForFunction(() => !document.querySelector('#output').textContent.includes('loading'), { timeout: 5000 });
  const own = await page.$eval('#output', (e) => e.textContent);
  check(own.includes(SECRET), 'the owner reads the last lines of the gang\'s output');
  await shoot(page, 'job');

  // 8. Another user signs in with a pasted token: sees the gang, not its output.
  const ctx = await browser.createBrowserContext();
  const alice = await ctx.newPage();
  watchConsole(alice, 'alice');
  await alice.setViewport({ width: 1280, height: 800 });
  await alice.goto(BASE);
  await alice.waitForSelector('#loginform');
  await shoot(alice, 'login');
  await alice.type('#tok', ALICE);
  await alice.click('#loginform button');
  await alice.waitForFunction(() => document.getElementById('main').dataset.rendered === 'cluster', { timeout: 15000 });
  check((await alice.$eval('#who', (e) => e.textContent)).includes('alice'), 'alice signed in with a pasted token');
  const seen = await alice.$$eval(`#gpumap i[data-j="${GANG}"]`, (c) => c.length);
  check(seen === 16, `alice sees the gang's GPUs (${seen})`);
  await open(alice, `#/job/${GANG}`);
  await alice.waitForFunction(() => !document.querySelector('#output').textContent.includes('loading'), { timeout: 5000 });
  const hers = await alice.$eval('#main', (e) => e.textContent);
  check(!hers.includes(SECRET) && /owner only/.test(hers), 'alice does not see root\'s output');
  await shoot(alice, 'job-other-user');
  await ctx.close();
} catch (e) {
  fail(`driver: ${e.stack || e}`);
} finally {
  await browser.close();
}
check(errors.length === 0, `no console errors${errors.length ? ': ' + errors.join(' | ') : ''}`);
process.exit(fails ? 1 : 0);

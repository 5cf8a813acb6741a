// Screenshots of every page for docs/dashboard.md, from a running cluster:
//   node web/test/screenshots.mjs "$(phalanx ui)" OUTDIR [JOBID]
// (docs/img holds them reduced to 64 colours: convert X.png -colors 64 PNG8:X.png).
import puppeteer from 'puppeteer-core';

const [link, out, job] = process.argv.slice(2);
const browser = await puppeteer.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'] });
const page = await browser.newPage();
await page.setViewport({ width: 1280, height: 800 });
await page.goto(link);
await page.waitForFunction(() => document.getElementById('main').dataset.rendered === 'cluster');
const pages = ['cluster', 'queue', 'share', 'usage'].concat(job ? [`job/${job}`] : []);
for (const p of pages) {
  await page.evaluate((h) => { location.hash = h; }, `#/${p}`);
  await page.waitForFunction((n) => document.getElementById('main').dataset.rendered === n, {}, p.split('/')[0]);
  await new Promise((r) => setTimeout(r, 500)); // charts and output settle
  await page.screenshot({ path: `${out}/${p.replace('/', '-').replace(/-\d+$/, '')}.png` });
}
await page.setViewport({ width: 390, height: 844 });
await page.evaluate(() => { location.hash = '#/cluster'; });
await new Promise((r) => setTimeout(r, 500));
await page.screenshot({ path: `${out}/phone.png` });
await browser.close();

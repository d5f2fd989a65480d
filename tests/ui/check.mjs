// The browser check of miniplane's web view, run by tests/tests/e2e/ui.rs:
//
//   node check.mjs <url of /ui/> <screenshot.png> [--require-debug] [--tls] [--no-rollout]
//
// Headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core)
// opens the page on a cluster where the test created Deployment `web` with
// 3 replicas, and checks the owner tree shows it. It then prints `READY`
// and waits for a line on stdin: the test has run `kubectl set image`. It
// checks the tree follows the rollout (a second ReplicaSet, new pods, the
// old ones gone), the timeline draws both ReplicaSets, (when the server
// has them, always with --require-debug) the journal and the time controls
// work, and another namespace can be chosen and left. The page must log no console error and throw nothing. Prints `PASS`
// and exits 0, or `FAIL <why>` and exits 1; the screenshot is written
// either way.
//
// --tls: the server is HTTPS with the cluster's own CA (which this browser
// does not know) and the URL carries `#token=…`; the page must take the
// token out of the address bar. --no-rollout: stop after the first check.
import { chromium } from 'playwright-core';
import { createInterface } from 'node:readline';

const [url, screenshot] = process.argv.slice(2);
const requireDebug = process.argv.includes('--require-debug');
const tls = process.argv.includes('--tls');
const rollout = !process.argv.includes('--no-rollout');
const PATIENCE_MS = 60_000;

// The flags of a browser on a machine with no network: nothing phones home.
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const page = await browser.newPage({ viewport: { width: 1400, height: 960 }, ignoreHTTPSErrors: tls });
const problems = [];
page.on('console', (m) => {
  if (m.type() === 'error') problems.push(`console error: ${m.text()} (${m.location().url})`);
});
page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));

/** What the owner tree shows, read from the page's DOM. */
function tree() {
  return page.evaluate(() => [...document.querySelectorAll('li[data-kind="Deployment"]')].map((d) => ({
    name: d.dataset.name,
    replicaSets: [...d.querySelectorAll('li[data-kind="ReplicaSet"]')].map((rs) => ({
      name: rs.dataset.name,
      text: rs.querySelector('.line').textContent,
      pods: [...rs.querySelectorAll('[data-kind="Pod"]')].map((p) => ({ name: p.dataset.name, state: p.dataset.state })),
    })),
  })));
}

/** Polls `check` (given the tree) until it holds; fails with the last tree seen. */
async function until(what, check) {
  const deadline = Date.now() + PATIENCE_MS;
  let last;
  while (Date.now() < deadline) {
    last = await tree();
    const web = last.find((d) => d.name === 'web');
    if (web && check(web)) return web;
    await page.waitForTimeout(200);
  }
  throw new Error(`timed out waiting for ${what}; the tree showed ${JSON.stringify(last)}`);
}

function readyPods(rs) {
  return rs.pods.filter((p) => p.state === 'ready').length;
}

async function waitForStdinLine() {
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    lines.close();
    return line;
  }
}

/** The journal lists entries, and a cause link highlights its cause. */
async function checkJournal() {
  await page.waitForSelector('#journal tbody tr', { timeout: PATIENCE_MS });
  // (The table is redrawn as entries come: find the link again by its cause.)
  const id = await page.locator('#journal button.cause').first().getAttribute('data-cause');
  await page.locator(`#journal button.cause[data-cause="${id}"]`).first().click();
  await page.waitForSelector(`#entry-${id}.highlight`, { timeout: PATIENCE_MS });
  // Clicking an object in the tree filters the journal by it.
  await page.locator('li[data-kind="Deployment"][data-name="web"] > .line > button.object').click();
  const filter = await page.inputValue('#filter');
  if (filter !== 'Deployment default/web') throw new Error(`the filter reads ${JSON.stringify(filter)}`);
  await page.waitForFunction(() => {
    const objects = [...document.querySelectorAll('#journal tbody tr td:nth-child(5)')].map((td) => td.textContent);
    return objects.length > 0 && objects.every((o) => o === 'Deployment web');
  }, null, { timeout: PATIENCE_MS });
  await page.click('#clear-filter');
}

/** Pause shows `paused`, step moves `now` on, resume shows `running`. */
async function checkTimeControls() {
  const now = () => page.textContent('#now');
  await page.click('#pause');
  await page.waitForFunction(() => document.getElementById('now').textContent.includes('paused'));
  const before = await now();
  // A step answers once it is done; the page then shows the new time.
  const [step] = await Promise.all([
    page.waitForResponse((r) => r.url().includes('/debug/time/step')),
    page.click('#step10'),
  ]);
  if (step.status() !== 200) throw new Error(`step 10s answered ${step.status()}: ${await step.text()}`);
  await page.waitForFunction((b) => document.getElementById('now').textContent !== b, before);
  await page.waitForSelector('#resume:enabled');
  await page.click('#resume');
  await page.waitForFunction(() => document.getElementById('now').textContent.includes('running'));
}

/** Another namespace shows its own tree (web is not in it); back, web again. */
async function checkNamespaceSwitch() {
  await page.waitForSelector('#namespace option[value="kube-system"]', { state: 'attached' });
  await page.selectOption('#namespace', 'kube-system');
  await page.waitForFunction(() => {
    const tree = document.getElementById('tree');
    return !tree.textContent.includes('loading') && !tree.querySelector('[data-name="web"]');
  }, null, { timeout: PATIENCE_MS });
  await page.selectOption('#namespace', 'default');
  await until('web again in namespace default', (web) => web.replicaSets.length === 2);
}

async function check() {
  await page.goto(url);
  const initial = await until('Deployment web with one ReplicaSet of 3 ready pods', (web) =>
    web.replicaSets.length === 1 && readyPods(web.replicaSets[0]) === 3 && web.replicaSets[0].pods.length === 3);
  if (page.url().includes('token=')) throw new Error(`the token is still in the address bar: ${page.url()}`);
  if (!rollout) return takeScreenshot();
  const oldPods = new Set(initial.replicaSets[0].pods.map((p) => p.name));
  const oldRs = initial.replicaSets[0].name;
  console.log('READY');
  await waitForStdinLine();
  await until('a second ReplicaSet', (web) => web.replicaSets.length === 2);
  await until('a pod of the new ReplicaSet', (web) =>
    web.replicaSets.some((rs) => rs.pods.some((p) => !oldPods.has(p.name))));
  await until('the rollout to end: 3 new ready pods, no old ones', (web) => {
    const fresh = web.replicaSets.find((rs) => rs.name !== oldRs);
    const old = web.replicaSets.find((rs) => rs.name === oldRs);
    return fresh && old && readyPods(fresh) === 3 && fresh.pods.length === 3 && old.pods.length === 0;
  });
  const lines = await page.locator('#timeline polyline.rs-line').count();
  if (lines !== 2) throw new Error(`the timeline draws ${lines} ReplicaSet lines, not 2`);
  const journalNote = await page.textContent('#journal-note');
  if (journalNote === '') await checkJournal();
  else if (requireDebug) throw new Error(`the journal is not shown: ${journalNote}`);
  const timeNote = await page.textContent('#now');
  if (!timeNote.includes('unavailable')) await checkTimeControls();
  else if (requireDebug) throw new Error(`the time controls are not shown: ${timeNote}`);
  // Let the timeline's clock move past the last change, for the picture.
  await page.waitForTimeout(1500);
  await takeScreenshot();
  await checkNamespaceSwitch();
}

let screenshotTaken = false;

async function takeScreenshot() {
  if (screenshot && !screenshotTaken) await page.screenshot({ path: screenshot });
  screenshotTaken = true;
}

let failure = null;
try {
  await check();
} catch (error) {
  failure = error.message;
}
await takeScreenshot(); // (where it failed, if it did)
await browser.close();
if (!failure && problems.length > 0) failure = problems.join('\n');
if (failure) {
  console.log(`FAIL ${failure}`);
  process.exit(1);
}
console.log('PASS');

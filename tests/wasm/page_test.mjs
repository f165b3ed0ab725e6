#!/usr/bin/env node
// The www/ page in real headless Chromium (playwright-core, /usr/bin/chromium): the in-page
// wasm server starts, the echo form (generated from its inputSchema) calls the tool, results
// render (text, JSON, image, error), the JSON-RPC traffic shows. Saves a screenshot to
// $ARTIFACTS (default target/wasm-artifacts). Prints `page: N passed, M failed`.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serveStatic } from '../../www/serve.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const artifacts = process.env.ARTIFACTS ?? path.join(root, 'target', 'wasm-artifacts');
fs.mkdirSync(artifacts, { recursive: true });
const watchdog = setTimeout(() => {
  console.error('page: timed out');
  process.exit(1);
}, 60000);

const { server, url } = await serveStatic();
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run'],
});
const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
const consoleErrors = [];
page.on('pageerror', (e) => consoleErrors.push(String(e)));
page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));

let passed = 0;
let failed = 0;
async function check(name, body) {
  try {
    await body();
    passed += 1;
    console.log(`ok   ${name}`);
  } catch (e) {
    failed += 1;
    console.log(`FAIL ${name}: ${e?.stack ?? e}`);
  }
}

await check('the page loads the wasm package and lists the tools', async () => {
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
  const tools = await page.$$eval('#tools form', (forms) => forms.map((f) => f.dataset.tool));
  assert.deepEqual(tools, ['echo', 'add', 'describe', 'swatch', 'fail']);
  assert.match(await page.textContent('#status'), /serving 5 tools/);
});
await check('the echo form is generated from inputSchema and calls the tool', async () => {
  const input = page.locator('form[data-tool="echo"] input[name="text"]');
  assert.equal(await input.getAttribute('type'), 'text');
  assert.equal(await input.evaluate((i) => i.required), true);
  await input.fill('hello from Chromium');
  await page.click('form[data-tool="echo"] button[type="submit"]');
  await page.waitForSelector('[data-result-for="echo"]');
  assert.equal(await page.textContent('[data-result-for="echo"] .block.text pre'), 'hello from Chromium');
});
await check('the traffic shows the tools/call request and its response', async () => {
  const entries = await page.$$eval('#traffic li pre', (pres) => pres.map((p) => JSON.parse(p.textContent)));
  const call = entries.find((m) => m.method === 'tools/call');
  assert.deepEqual(call.params, { name: 'echo', arguments: { text: 'hello from Chromium' } });
  const reply = entries.find((m) => m.id === call.id && m.result);
  assert.deepEqual(reply.result.content, [{ type: 'text', text: 'hello from Chromium' }]);
});
await check('number fields and JSON results', async () => {
  await page.fill('form[data-tool="add"] input[name="x"]', '2');
  await page.fill('form[data-tool="add"] input[name="y"]', '5');
  await page.click('form[data-tool="add"] button[type="submit"]');
  await page.waitForSelector('[data-result-for="add"]');
  assert.equal(await page.textContent('[data-result-for="add"] pre'), '7');
  await page.fill('form[data-tool="describe"] input[name="word"]', 'wasm');
  await page.check('form[data-tool="describe"] input[name="shout"]');
  await page.click('form[data-tool="describe"] button[type="submit"]');
  await page.waitForSelector('[data-result-for="describe"] .block.json');
  const json = JSON.parse(await page.textContent('[data-result-for="describe"] .block.json pre'));
  assert.deepEqual(json, { word: 'WASM', length: 4, unit: 'chars' });
});
await check('image results render', async () => {
  await page.click('form[data-tool="swatch"] button[type="submit"]');
  await page.waitForSelector('[data-result-for="swatch"] img');
  const width = await page.$eval('[data-result-for="swatch"] img', (img) => img.decode().then(() => img.naturalWidth));
  assert.equal(width, 96);
});
await check('a throwing tool shows its error plainly', async () => {
  await page.click('form[data-tool="fail"] button[type="submit"]');
  await page.waitForSelector('#result .error');
  assert.match(await page.textContent('#result .error'), /The tool fail failed.*this tool always fails/s);
});
await check('a broken tool source shows an error instead of a server', async () => {
  await page.fill('#tools-source', '[{ name: "x" }]');
  await page.click('#start');
  await page.waitForSelector('#result .error');
  const text = await page.textContent('#result .error');
  assert.match(text, /MCP error -32602: .*execute must be a function/);
});
await check('no console errors', async () => {
  assert.deepEqual(consoleErrors, []);
});

// The screenshot shows the echo call (the state a person would check).
await page.goto(url);
await page.waitForSelector('body[data-ready="true"]');
await page.fill('form[data-tool="echo"] input[name="text"]', 'hello from Chromium');
await page.click('form[data-tool="echo"] button[type="submit"]');
await page.waitForSelector('[data-result-for="echo"]');
const shot = path.join(artifacts, 'www.png');
await page.screenshot({ path: shot, fullPage: true });
console.log(`page: screenshot at ${path.relative(root, shot)}`);

await browser.close();
server.close();
clearTimeout(watchdog);
console.log(`page: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);

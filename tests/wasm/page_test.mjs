#!/usr/bin/env node
// The www/ page in real headless Chromium (playwright-core, /usr/bin/chromium):
//   - the in-page wasm server starts, the echo form (generated from its inputSchema) calls the
//     tool, results render (text, JSON, image, error), the JSON-RPC traffic shows;
//   - the remote mode, with the wasm MCP client, against `orkestrel-mcp serve --http 127.0.0.1:0
//     --cors <page origin>` ($ORKESTREL_MCP_BIN, default target/debug/orkestrel-mcp): connect over
//     Streamable HTTP and over WebSocket, list tools, fill the echo form, call, assert the DOM —
//     with `era: 'legacy'` (the initialize handshake, a session) and with `era: 'auto'` (the
//     default), which reaches 2026-07-28 through the CORS preflight of its Mcp-Method, Mcp-Name
//     and MCP-Protocol-Version headers;
//   - the resources, prompts and notifications panes (www/explore.js): against the native
//     server, list resources and read one, read through a resource template's form, list prompts
//     and get one with an argument, see a tool's log messages arrive (timestamped, the last 200
//     kept), set the log level; the in-page server declares neither and says so.
// Saves screenshots to $ARTIFACTS (default target/wasm-artifacts). Prints
// `page: N passed, M failed`.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
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
}, 120000);

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
await check('the in-page server declares no resources or prompts, and has no notification channel', async () => {
  assert.match(await page.textContent('#explore-resources'), /The server declares no resources\./);
  assert.match(await page.textContent('#explore-prompts'), /The server declares no prompts\./);
  assert.match(await page.textContent('#notification-note'), /no way back for notifications/);
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

// ---- the remote mode against the native server ----------------------------------------------

/** Start `orkestrel-mcp serve --http 127.0.0.1:0 --cors <origin>`; resolve to its /mcp URL. */
function startNative(origin) {
  const bin = process.env.ORKESTREL_MCP_BIN ?? path.join(root, 'target', 'debug', 'orkestrel-mcp');
  const child = spawn(bin, ['serve', '--http', '127.0.0.1:0', '--cors', origin], { stdio: ['ignore', 'pipe', 'pipe'] });
  const ready = new Promise((resolve, reject) => {
    let log = '';
    const timer = setTimeout(() => reject(new Error(`the native server did not start: ${log}`)), 20000);
    const read = (chunk) => {
      log += chunk;
      const m = /serving MCP at (http:\/\/\S+)\s/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`the native server exited (${code}): ${log}`)); });
  });
  return { child, ready };
}

const origin = new URL(url).origin;
const native = startNative(origin);
let mcpUrl;
await check('orkestrel-mcp serve --http starts (CORS for the page origin)', async () => {
  mcpUrl = await native.ready;
  assert.match(mcpUrl, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
});

const errorsBefore = consoleErrors.length;
// Every request the page sends to the native server (method, headers, body).
const sent = [];
page.on('request', (request) => {
  if (mcpUrl && request.url() === mcpUrl) {
    sent.push({ method: request.method(), headers: request.headers(), body: request.postData() });
  }
});
async function connectRemote(serverUrl, era) {
  const query = `server=${encodeURIComponent(serverUrl)}${era ? `&era=${era}` : ''}`;
  await page.goto(`${url}?${query}`);
  await page.waitForSelector('body[data-remote]', { timeout: 20000 });
  const state = await page.getAttribute('body', 'data-remote');
  if (state !== 'connected') throw new Error(`not connected: ${await page.textContent('#result')}`);
}
/** `params` without `_meta` (a 2026-07-28 request carries its envelope there). */
function withoutMeta(params) {
  const { _meta, ...rest } = params ?? {};
  return rest;
}
async function echoOver(transportName, text, { modern = false } = {}) {
  const tools = await page.$$eval('#tools form', (forms) => forms.map((f) => f.dataset.tool));
  assert.deepEqual(tools, ['echo', 'add', 'fail', 'sleep', 'progress']);
  const input = page.locator('form[data-tool="echo"] input[name="text"]');
  assert.equal(await input.evaluate((i) => i.required), true);
  await input.fill(text);
  await page.click('form[data-tool="echo"] button[type="submit"]');
  await page.waitForSelector('[data-result-for="echo"]');
  assert.equal(await page.textContent('[data-result-for="echo"] .block.text pre'), text);
  const entries = await page.$$eval('#traffic li pre', (pres) => pres.map((p) => JSON.parse(p.textContent)));
  const call = entries.find((m) => m.method === 'tools/call');
  if (modern) {
    assert.deepEqual(withoutMeta(call.params), { name: 'echo', arguments: { text } });
    assert.equal(call.params._meta['io.modelcontextprotocol/protocolVersion'], '2026-07-28');
  } else {
    assert.deepEqual(withoutMeta(call.params), { name: 'echo', arguments: { text } });
  }
  // The page asks for progress on every call (its notifications pane shows it).
  assert.equal(call.params._meta.progressToken, call.id);
  const reply = entries.find((m) => m.id === call.id && m.result);
  assert.deepEqual(reply.result.content, [{ type: 'text', text }]);
  assert.match(await page.textContent('#remote-info'), new RegExp(transportName));
}

await check('remote over Streamable HTTP: connect, list tools, call echo', async () => {
  await connectRemote(mcpUrl, 'legacy');
  assert.match(await page.textContent('#status'), /connected to .* \(5 tools\)/);
  assert.match(await page.textContent('#remote-info'), /orkestrel-mcp .* session [0-9a-f-]+/);
  await echoOver('Streamable HTTP', 'hello over HTTP');
  await page.screenshot({ path: path.join(artifacts, 'www-remote-http.png'), fullPage: true });
});
await check('remote over HTTP: numbers, structuredContent, tool errors shown plainly', async () => {
  await page.fill('form[data-tool="add"] input[name="a"]', '2');
  await page.fill('form[data-tool="add"] input[name="b"]', '5');
  await page.click('form[data-tool="add"] button[type="submit"]');
  await page.waitForSelector('[data-result-for="add"]');
  assert.equal(await page.textContent('[data-result-for="add"] .block.text pre'), '7');
  assert.deepEqual(JSON.parse(await page.textContent('[data-result-for="add"] .block.json pre')), { sum: 7 });
  await page.fill('form[data-tool="fail"] input[name="message"]', 'remote failure');
  await page.click('form[data-tool="fail"] button[type="submit"]');
  await page.waitForSelector('#result .error');
  assert.match(await page.textContent('#result .error'), /The tool fail failed.*remote failure/s);
});
await check('remote over HTTP: list resources and read one; templates list and read through a form', async () => {
  await page.waitForSelector('#resources li[data-uri]');
  const uris = await page.$$eval('#resources li[data-uri]', (items) => items.map((li) => li.dataset.uri));
  assert.deepEqual(uris, ['orkestrel://about']);
  await page.getByRole('button', { name: 'Read orkestrel://about' }).click();
  await page.waitForSelector('[data-resource="orkestrel://about"]');
  assert.equal(await page.textContent('[data-resource="orkestrel://about"] .block.text pre'),
    'orkestrel-mcp: a Rust MCP server and client.');
  assert.match(await page.textContent('[data-resource="orkestrel://about"] .kind'), /text\/plain · orkestrel:\/\/about/);
  // serve declares resources.subscribe: the Subscribe button sends resources/subscribe.
  await page.getByRole('button', { name: 'Subscribe to orkestrel://about' }).click();
  await page.waitForSelector('#resources li[data-uri="orkestrel://about"] button:disabled >> text=Subscribed');
  const templates = await page.$$eval('#resource-templates form', (forms) => forms.map((f) => f.dataset.template));
  assert.deepEqual(templates, ['orkestrel://echo/{text}']);
  const form = 'form[data-template="orkestrel://echo/{text}"]';
  await page.locator(form).getByLabel('text', { exact: true }).fill('from-a-template');
  assert.equal(await page.textContent(`${form} .row code`), 'orkestrel://echo/from-a-template');
  await page.click(`${form} button[type="submit"]`);
  await page.waitForSelector('[data-resource="orkestrel://echo/from-a-template"]');
  assert.equal(await page.textContent('[data-resource="orkestrel://echo/from-a-template"] pre'), 'from-a-template');
  const entries = await page.$$eval('#traffic li pre', (pres) => pres.map((p) => JSON.parse(p.textContent)));
  assert.ok(entries.some((m) => m.method === 'resources/templates/list'));
  assert.deepEqual(entries.find((m) => m.method === 'resources/subscribe').params, { uri: 'orkestrel://about' });
  assert.deepEqual(entries.filter((m) => m.method === 'resources/read').map((m) => m.params.uri),
    ['orkestrel://about', 'orkestrel://echo/from-a-template']);
});
await check('remote over HTTP: list prompts and get one with an argument', async () => {
  const prompts = await page.$$eval('#prompts form', (forms) => forms.map((f) => f.dataset.prompt));
  assert.deepEqual(prompts, ['greet']);
  const input = page.locator('form[data-prompt="greet"] input[name="name"]');
  assert.equal(await input.evaluate((i) => i.required), true);
  assert.match(await page.textContent('form[data-prompt="greet"] label'), /name \* — Who to greet/);
  await input.fill('Ada');
  await page.getByRole('button', { name: 'Get greet' }).click();
  await page.waitForSelector('[data-prompt-result="greet"]');
  assert.equal(await page.textContent('[data-prompt-result="greet"] .message[data-role="user"] .block.text pre'), 'Please greet Ada.');
  assert.match(await page.textContent('[data-prompt-result="greet"]'), /A greeting/);
  const entries = await page.$$eval('#traffic li pre', (pres) => pres.map((p) => JSON.parse(p.textContent)));
  assert.deepEqual(entries.find((m) => m.method === 'prompts/get').params, { name: 'greet', arguments: { name: 'Ada' } });
});
await check('remote over HTTP: progress and log messages from a tool call arrive in the notifications pane, timestamped', async () => {
  await page.fill('form[data-tool="progress"] input[name="steps"]', '3');
  await page.fill('form[data-tool="progress"] input[name="ms"]', '1');
  await page.click('form[data-tool="progress"] button[type="submit"]');
  await page.waitForSelector('[data-result-for="progress"]');
  // The log messages travel on the call's SSE reply, before its response.
  const seen = await page.$$eval('#notifications li[data-method="notifications/message"]', (items) => items.map((li) => ({
    summary: li.querySelector('.summary').textContent,
    time: li.querySelector('time').getAttribute('datetime'),
    params: JSON.parse(li.querySelector('details pre').textContent),
  })));
  assert.deepEqual(seen.map((n) => n.summary), ['[info] progress: step 1 of 3', '[info] progress: step 2 of 3', '[info] progress: step 3 of 3']);
  assert.deepEqual(seen[0].params, { level: 'info', logger: 'progress', data: 'step 1 of 3' });
  for (const n of seen) assert.ok(!Number.isNaN(Date.parse(n.time)), n.time);
  // The page's call carries a progressToken (the client's onProgress option): progress too.
  const entries = await page.$$eval('#traffic li pre', (pres) => pres.map((p) => JSON.parse(p.textContent)));
  const call = entries.filter((m) => m.method === 'tools/call' && m.params.name === 'progress').at(-1);
  const token = call.params._meta.progressToken;
  assert.equal(token, call.id);
  const progress = await page.$$eval('#notifications li[data-method="notifications/progress"] .summary', (items) => items.map((s) => s.textContent));
  assert.deepEqual(progress, [1, 2, 3].map((i) => `${i} / 3 — step ${i} of 3 (token ${token})`));
  const order = await page.$$eval('#notifications li', (items) => items.map((li) => li.dataset.method.split('/').at(-1)));
  assert.deepEqual(order, ['progress', 'message', 'progress', 'message', 'progress', 'message']);
  await page.screenshot({ path: path.join(artifacts, 'www-explore.png'), fullPage: true });
});
await check('remote over HTTP: the notifications pane keeps the last 200', async () => {
  await page.click('#clear-notifications');
  await page.fill('form[data-tool="progress"] input[name="steps"]', '205');
  await page.fill('form[data-tool="progress"] input[name="ms"]', '0');
  await page.click('form[data-tool="progress"] button[type="submit"]');
  await page.waitForSelector('[data-result-for="progress"] >> text=done 205 steps');
  // 410 arrived (a progress and a log message per step): the last 200 are steps 106 to 205.
  assert.equal(await page.locator('#notifications li').count(), 200);
  const logs = await page.$$eval('#notifications li[data-method="notifications/message"] .summary', (items) => items.map((s) => s.textContent));
  assert.equal(logs.length, 100);
  assert.equal(logs[0], '[info] progress: step 106 of 205');
  assert.equal(logs[99], '[info] progress: step 205 of 205');
});
await check('remote over HTTP: the log level (logging/setLevel) filters what arrives', async () => {
  await page.click('#clear-notifications');
  await page.getByLabel('Log level').selectOption('warning');
  await page.waitForSelector('#log-level-row >> text=level set to warning');
  await page.fill('form[data-tool="progress"] input[name="steps"]', '2');
  await page.click('form[data-tool="progress"] button[type="submit"]');
  await page.waitForSelector('[data-result-for="progress"] >> text=done 2 steps');
  // The info log messages are filtered out; progress is not logging.
  assert.equal(await page.locator('#notifications li[data-method="notifications/message"]').count(), 0);
  assert.equal(await page.locator('#notifications li[data-method="notifications/progress"]').count(), 2);
  const entries = await page.$$eval('#traffic li pre', (pres) => pres.map((p) => JSON.parse(p.textContent)));
  assert.deepEqual(entries.find((m) => m.method === 'logging/setLevel').params, { level: 'warning' });
});
await check('remote over HTTP: disconnect', async () => {
  await page.click('#disconnect');
  await page.waitForSelector('body[data-remote="disconnected"]');
  assert.match(await page.textContent('#status'), /disconnected/);
});
await check('remote over WebSocket: connect, list tools, call echo', async () => {
  await connectRemote(mcpUrl.replace(/^http/, 'ws'), 'legacy');
  await echoOver('WebSocket', 'hello over WebSocket');
  await page.screenshot({ path: path.join(artifacts, 'www-remote-ws.png'), fullPage: true });
});
await check("remote over HTTP with era 'legacy': the initialize handshake and a session", async () => {
  await connectRemote(mcpUrl, 'legacy');
  assert.equal(await page.getAttribute('body', 'data-era'), 'legacy');
  assert.notEqual(await page.getAttribute('body', 'data-protocol'), '2026-07-28');
  assert.match(await page.textContent('#remote-info'), /protocol 2025-\d\d-\d\d \(legacy era\), session [0-9a-f-]+/);
  const entries = await page.$$eval('#traffic li pre', (pres) => pres.map((p) => JSON.parse(p.textContent)));
  assert.equal(entries[0].method, 'initialize');
  assert.ok(!entries.some((m) => m.method === 'server/discover'));
});
await check("remote over HTTP with era 'auto' reaches 2026-07-28 (CORS admits its headers)", async () => {
  sent.length = 0;
  await connectRemote(mcpUrl, 'auto');
  assert.equal(await page.getAttribute('body', 'data-protocol'), '2026-07-28');
  assert.equal(await page.getAttribute('body', 'data-era'), 'modern');
  // The server info comes from server/discover; no handshake, no session.
  assert.match(await page.textContent('#remote-info'), /^orkestrel-mcp \S+ over Streamable HTTP, protocol 2026-07-28 \(modern era\), 5 tools$/);
  const entries = await page.$$eval('#traffic li pre', (pres) => pres.map((p) => JSON.parse(p.textContent)));
  assert.equal(entries[0].method, 'server/discover');
  assert.ok(!entries.some((m) => m.method === 'initialize'));
  await echoOver('Streamable HTTP', 'hello over 2026-07-28', { modern: true });
  // What Chromium sent after the preflight: the 2026-07-28 headers, no session.
  const call = sent.find((r) => r.method === 'POST' && JSON.parse(r.body).method === 'tools/call');
  assert.ok(call, `no tools/call POST among ${sent.map((r) => r.method).join(', ')}`);
  assert.equal(call.headers['mcp-protocol-version'], '2026-07-28');
  assert.equal(call.headers['mcp-method'], 'tools/call');
  assert.equal(call.headers['mcp-name'], 'echo');
  assert.equal(call.headers['mcp-session-id'], undefined);
  await page.screenshot({ path: path.join(artifacts, 'www-remote-http-2026.png'), fullPage: true });
});
await check("the JS client's era defaults to 'auto' (2026-07-28 against a modern server)", async () => {
  const seen = await page.evaluate(async (serverUrl) => {
    const m = await import('/pkg/orkestrel_mcp.js');
    const client = m.createMCPClient({ transport: m.createFetchTransport({ url: serverUrl }) });
    await client.connect();
    const out = {
      protocolVersion: client.protocolVersion,
      era: client.era,
      session: client.sessionId ?? null,
      serverInfo: client.serverInfo,
      initialize: client.initializeResult ?? null,
      discover: Array.isArray(client.discoverResult?.supportedVersions),
    };
    await client.disconnect();
    return out;
  }, mcpUrl);
  assert.equal(seen.protocolVersion, '2026-07-28');
  assert.equal(seen.era, 'modern');
  assert.equal(seen.session, null);
  assert.equal(seen.serverInfo.name, 'orkestrel-mcp');
  assert.equal(seen.initialize, null);
  assert.equal(seen.discover, true);
});
await check("remote over WebSocket with era 'auto' reaches 2026-07-28", async () => {
  await connectRemote(mcpUrl.replace(/^http/, 'ws'), 'auto');
  assert.equal(await page.getAttribute('body', 'data-protocol'), '2026-07-28');
  await echoOver('WebSocket', 'hello over WebSocket, 2026', { modern: true });
});
await check('remote over WebSocket, 2026-07-28: resources and prompts', async () => {
  await page.waitForSelector('#resources li[data-uri="orkestrel://about"]');
  await page.getByRole('button', { name: 'Read orkestrel://about' }).click();
  await page.waitForSelector('[data-resource="orkestrel://about"]');
  assert.equal(await page.textContent('[data-resource="orkestrel://about"] pre'), 'orkestrel-mcp: a Rust MCP server and client.');
  await page.fill('form[data-prompt="greet"] input[name="name"]', 'Grace');
  await page.click('form[data-prompt="greet"] button[type="submit"]');
  await page.waitForSelector('[data-prompt-result="greet"]');
  assert.equal(await page.textContent('[data-prompt-result="greet"] .block.text pre'), 'Please greet Grace.');
});
await check('remote over WebSocket, 2026-07-28: the chosen log level rides on each call; progress and logs arrive', async () => {
  await page.getByLabel('Log level').selectOption('info');
  await page.fill('form[data-tool="progress"] input[name="steps"]', '2');
  await page.fill('form[data-tool="progress"] input[name="ms"]', '1');
  await page.click('form[data-tool="progress"] button[type="submit"]');
  await page.waitForSelector('[data-result-for="progress"] >> text=done 2 steps');
  const logs = await page.$$eval('#notifications li[data-method="notifications/message"] .summary', (items) => items.map((s) => s.textContent));
  assert.deepEqual(logs, ['[info] progress: step 1 of 2', '[info] progress: step 2 of 2']);
  assert.equal(await page.locator('#notifications li[data-method="notifications/progress"]').count(), 2);
  const entries = await page.$$eval('#traffic li pre', (pres) => pres.map((p) => JSON.parse(p.textContent)));
  const call = entries.find((m) => m.method === 'tools/call' && m.params.name === 'progress');
  assert.equal(call.params._meta['io.modelcontextprotocol/logLevel'], 'info');
  assert.ok(!entries.some((m) => m.method === 'logging/setLevel'));
});
await check('no console errors in the remote mode', async () => {
  assert.deepEqual(consoleErrors.slice(errorsBefore), []);
});
await check('a server that is not there is an error shown plainly', async () => {
  await page.goto(`${url}?server=${encodeURIComponent('http://127.0.0.1:9/mcp')}`);
  await page.waitForSelector('body[data-remote="failed"]', { timeout: 20000 });
  assert.match(await page.textContent('#result .error'), /Could not connect to http:\/\/127\.0\.0\.1:9\/mcp.*MCP error -32000/s);
  assert.match(await page.textContent('#status'), /connection failed/);
});
native.child.kill();

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

#!/usr/bin/env node
// The www/ console's sign-in in real headless Chromium (playwright-core): a remote server
// protected by a real authorization server — oidc-provider (tests/auth/provider.mjs, with CORS
// for the page on registration) and `orkestrel-mcp serve --http 127.0.0.1:0 --auth-issuer ISSUER
// --auth-scope mcp:tools --cors <page origin>`. Connect opens a popup on the authorization URL;
// the test signs in there (the provider's login and consent pages); callback.html posts the
// redirect back; the console shows who is signed in and calls `whoami`; a reload uses the tokens
// kept in localStorage (no popup); Sign out forgets them; a closed popup fails plainly.
// Saves screenshots to $ARTIFACTS (default target/wasm-artifacts). Prints
// `page-auth: N passed, M failed`.
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
const bin = process.env.ORKESTREL_MCP_BIN ?? path.join(root, 'target', 'debug', 'orkestrel-mcp');
const authDir = path.join(root, 'tests', 'auth');
const children = [];
const watchdog = setTimeout(() => {
  console.error('page-auth: timed out');
  process.exit(1);
}, 120000);
process.on('exit', () => children.forEach((c) => c.kill()));

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

/** Run `command args` (with `env`), resolve to the first match of `pattern` in its output. */
function start(command, args, pattern, env = {}) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  children.push(child);
  return new Promise((resolve, reject) => {
    let log = '';
    const timer = setTimeout(() => reject(new Error(`${command} did not start: ${log}`)), 20000);
    const read = (chunk) => {
      log += chunk;
      const m = pattern.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`${command} exited (${code}): ${log}`)); });
  });
}

const { server, url } = await serveStatic();
const origin = new URL(url).origin;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run'],
});
const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
const page = await context.newPage();
// `&blockpopup` makes the page's first window.open answer null, as a popup blocker does (headless
// Chromium under playwright blocks none).
await page.addInitScript(() => {
  if (!new URLSearchParams(location.search).has('blockpopup')) return;
  const open = window.open.bind(window);
  let blocked = false;
  window.open = (...args) => {
    if (blocked) return open(...args);
    blocked = true;
    return null;
  };
});
const consoleErrors = [];
page.on('pageerror', (e) => consoleErrors.push(String(e)));

let issuer;
let mcpUrl;
await check('oidc-provider and a protected orkestrel-mcp serve (CORS for the page) start', async () => {
  assert.ok(fs.existsSync(path.join(authDir, 'node_modules', 'oidc-provider')),
    'oidc-provider is not installed: run `npm ci` in tests/auth');
  issuer = await start('node', [path.join(authDir, 'provider.mjs')], /issuer (http:\/\/\S+)\s/, { CORS_ORIGIN: origin });
  mcpUrl = await start(bin, ['serve', '--http', '127.0.0.1:0', '--auth-issuer', issuer, '--auth-scope', 'mcp:tools',
    '--cors', origin], /serving MCP at (http:\/\/\S+)\s/);
});

/** In the sign-in popup: the provider's login form (any user: alice) unless its session cookie
 * says who already, then its consent form, until callback.html closes the window. */
async function signInAt(popup) {
  let closed = false;
  const gone = popup.waitForEvent('close').then(() => { closed = true; });
  for (let step = 0; !closed; step++) {
    assert.ok(step < 5, `still at ${popup.url()} after ${step} forms`);
    await popup.waitForSelector('button[type="submit"]').catch(() => {}); // rejects once closed
    if (closed || popup.isClosed()) break;
    assert.equal(new URL(popup.url()).origin, issuer);
    if (await popup.locator('input[name="login"]').count()) {
      await popup.fill('input[name="login"]', 'alice');
      await popup.fill('input[name="password"]', 'any');
    }
    // The last form redirects to callback.html, which posts the redirect back and closes itself.
    await Promise.all([popup.waitForNavigation().catch(() => {}), popup.click('button[type="submit"]').catch(() => {})]);
  }
  await gone;
}

/** The sign-in window that `action` (a click) opens: the popup, or — when the browser blocked it
 * (the click's activation spent before the popup was asked for) — the one the console's button opens. */
async function popupAfter(action) {
  const popup = page.waitForEvent('popup');
  await action();
  const first = await Promise.race([popup, page.waitForSelector('#sign-in-open:not([hidden])').then(() => null)]);
  if (first) return first;
  const second = page.waitForEvent('popup');
  await page.click('#sign-in-open');
  return second;
}

async function openRemote() {
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
  await page.click('#mode-remote');
  await page.fill('#server-url', mcpUrl);
}

if (mcpUrl) {
  await check('Connect on a 401 opens the sign-in popup; after it the console is connected and says who', async () => {
    await openRemote();
    await signInAt(await popupAfter(() => page.click('#connect')));
    await page.waitForSelector('body[data-remote]', { timeout: 20000 });
    assert.equal(await page.getAttribute('body', 'data-remote'), 'connected', await page.textContent('#result'));
    assert.equal(await page.getAttribute('body', 'data-auth'), 'signed-in');
    const who = await page.textContent('#auth-info');
    assert.match(who, new RegExp(`^Signed in as alice at ${issuer.replace(/[.]/g, '\\.')} · scope [^·]*\\bmcp:tools\\b`));
    assert.equal(await page.isVisible('#sign-out'), true);
    await page.screenshot({ path: path.join(artifacts, 'www-signed-in.png'), fullPage: true });
  });

  await check('the tool sees the signed-in user (whoami)', async () => {
    await page.click('form[data-tool="whoami"] button[type="submit"]');
    await page.waitForSelector('[data-result-for="whoami"]');
    assert.match(await page.textContent('[data-result-for="whoami"]'), /"subject": "alice"/);
  });

  await check('the tokens are kept in localStorage: a reload connects with no popup', async () => {
    const kept = await page.evaluate((u) => JSON.parse(localStorage.getItem(`orkestrel-mcp:credentials:${u}`)), mcpUrl);
    assert.equal(kept.issuer, issuer);
    assert.equal(typeof kept.tokens.accessToken, 'string');
    let popups = 0;
    page.on('popup', () => { popups += 1; });
    await page.goto(`${url}?server=${encodeURIComponent(mcpUrl)}`);
    await page.waitForSelector('body[data-remote]', { timeout: 20000 });
    assert.equal(await page.getAttribute('body', 'data-remote'), 'connected', await page.textContent('#result'));
    assert.equal(popups, 0);
    assert.match(await page.textContent('#auth-info'), /^Signed in as alice/);
  });

  await check('Sign out forgets the tokens and disconnects', async () => {
    await page.click('#sign-out');
    await page.waitForSelector('body[data-remote="disconnected"]');
    assert.equal(await page.getAttribute('body', 'data-auth'), 'signed-out');
    assert.match(await page.textContent('#status'), /signed out/);
    const kept = await page.evaluate((u) => localStorage.getItem(`orkestrel-mcp:credentials:${u}`), mcpUrl);
    assert.equal(kept, null);
    assert.equal(await page.isVisible('#auth'), false);
  });

  await check('a sign-in window closed by the user fails the connect and says why', async () => {
    await openRemote();
    await (await popupAfter(() => page.click('#connect'))).close();
    await page.waitForSelector('body[data-remote="failed"]', { timeout: 20000 });
    assert.match(await page.textContent('#auth-problem'), /authorization failed: the sign-in failed: the sign-in window was closed/);
    assert.match(await page.textContent('#result .error'), /Could not connect/);
  });

  await check('a popup the browser blocks is opened by a button instead', async () => {
    let popups = 0;
    page.on('popup', () => { popups += 1; });
    await page.goto(`${url}?server=${encodeURIComponent(mcpUrl)}&blockpopup`);
    await page.waitForSelector('#sign-in-open:not([hidden])', { timeout: 20000 });
    assert.equal(popups, 0, 'blocked');
    assert.match(await page.textContent('#status'), /asks you to sign in/);
    const popup = page.waitForEvent('popup');
    await page.click('#sign-in-open');
    await signInAt(await popup);
    await page.waitForSelector('body[data-remote]', { timeout: 20000 });
    assert.equal(await page.getAttribute('body', 'data-remote'), 'connected', await page.textContent('#result'));
    assert.match(await page.textContent('#auth-info'), /^Signed in as alice/);
  });
}

await check('no page errors', async () => {
  assert.deepEqual(consoleErrors, []);
});

await browser.close();
server.close();
clearTimeout(watchdog);
console.log(`page-auth: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);

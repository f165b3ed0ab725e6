#!/usr/bin/env node
// The JS client's sign-in (createFetchTransport's `auth` option, the nodejs package) against a
// real authorization server: oidc-provider (tests/auth/provider.mjs: dynamic registration, PKCE,
// resource indicators, JWT access tokens, refresh tokens) protecting
// `orkestrel-mcp serve --http 127.0.0.1:0 --auth-issuer ISSUER --auth-scope mcp:tools`.
// `auth.signIn(url)` walks the provider's login and consent pages in node (tests/auth/walk.mjs)
// and resolves with the final redirect, as a browser popup's callback page would.
// Prints `client-auth: N passed, M failed`; exit 1 on a failure.
//
//   ORKESTREL_MCP_PKG=target/wasm-pkg/node/orkestrel_mcp.js \
//   ORKESTREL_MCP_BIN=target/debug/orkestrel-mcp node tests/wasm/client_auth.mjs
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const pkg = process.env.ORKESTREL_MCP_PKG ?? path.join(root, 'target', 'wasm-pkg', 'node', 'orkestrel_mcp.js');
const { createMCPClient, createFetchTransport } = createRequire(import.meta.url)(pkg);
const bin = process.env.ORKESTREL_MCP_BIN ?? path.join(root, 'target', 'debug', 'orkestrel-mcp');
const authDir = path.join(root, 'tests', 'auth');
const { walkSignIn } = await import(path.join(authDir, 'walk.mjs'));
const REDIRECT_URI = 'http://127.0.0.1:9/callback';

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

const children = [];
/** Run `command args`, resolve to the first match of `pattern` in its output. */
function start(command, args, pattern) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
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

// A hang fails the run, and no child outlives it.
const watchdog = setTimeout(() => {
  console.error('client-auth: timed out');
  process.exit(1);
}, 90000);
process.on('exit', () => children.forEach((c) => c.kill()));

/** A client over a fetch transport with `auth`; `signIn` and `save` calls are recorded. */
function signedClient(url, { load, signIn = walkSignIn, era, ...rest } = {}) {
  const seen = { signIns: [], saved: [], errors: [] };
  const transport = createFetchTransport({
    url,
    auth: {
      redirectUri: REDIRECT_URI,
      clientName: 'client_auth.mjs',
      signIn: async (at) => {
        seen.signIns.push(at);
        return signIn(at);
      },
      load,
      save: (credentials) => seen.saved.push(credentials),
      ...rest,
    },
  });
  const client = createMCPClient({ transport, name: 'client-auth', version: '0.0.0', era });
  client.on('error', (e) => seen.errors.push(e.message));
  return { client, seen };
}

async function rejection(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

let issuer;
let url;
await check('oidc-provider and a protected orkestrel-mcp serve start on 127.0.0.1', async () => {
  assert.ok(fs.existsSync(path.join(authDir, 'node_modules', 'oidc-provider')),
    'oidc-provider is not installed: run `npm ci` in tests/auth (tests/run.sh and tests/wasm/run.sh do)');
  issuer = await start('node', [path.join(authDir, 'provider.mjs')], /issuer (http:\/\/\S+)\s/);
  url = await start(bin, ['serve', '--http', '127.0.0.1:0', '--auth-issuer', issuer, '--auth-scope', 'mcp:tools'],
    /serving MCP at (http:\/\/\S+)\s/);
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
});

let kept;
if (url) {
  await check('a 401 signs in through auth.signIn (registration, PKCE, resource) and the tool sees the user', async () => {
    const { client, seen } = signedClient(url);
    await client.connect();
    assert.equal(seen.signIns.length, 1);
    const at = new URL(seen.signIns[0]);
    assert.equal(at.origin, issuer);
    assert.equal(at.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(at.searchParams.get('resource'), url);
    assert.equal(at.searchParams.get('redirect_uri'), REDIRECT_URI);
    assert.match(at.searchParams.get('scope'), /\bmcp:tools\b/);
    const result = await client.callTool('whoami', {});
    const me = result.structuredContent ?? JSON.parse(result.content[0].text);
    assert.equal(me.subject, 'alice');
    assert.ok(me.scopes.includes('mcp:tools'), JSON.stringify(me));
    await client.disconnect();
    assert.equal(seen.saved.length, 1, 'saved once');
    kept = seen.saved[0];
    assert.equal(kept.issuer, issuer);
    assert.equal(typeof kept.clientId, 'string');
    assert.equal(kept.tokenEndpointAuthMethod, 'none');
    assert.equal(typeof kept.tokens.accessToken, 'string');
    assert.equal(typeof kept.tokens.refreshToken, 'string', 'a refresh token (the client registered for one)');
    assert.match(kept.tokens.scope, /\bmcp:tools\b/);
    // `expiresAt` is ms since the epoch, as Date.now(): the provider's tokens live 300 s.
    const left = kept.tokens.expiresAt - Date.now();
    assert.ok(left > 200_000 && left <= 301_000, `expires in ${left} ms`);
    assert.deepEqual(seen.errors, []);
  });
}

if (kept) {
  await check('kept credentials (auth.load) are sent at once: no sign-in, no new save', async () => {
    const { client, seen } = signedClient(url, { load: () => kept });
    await client.connect();
    await client.callTool('whoami', {});
    await client.disconnect();
    assert.deepEqual(seen.signIns, []);
    assert.deepEqual(seen.saved, []);
  });

  await check("in the handshake era too: a sign-in, then the session's requests carry the token", async () => {
    const { client, seen } = signedClient(url, { era: 'legacy' });
    await client.connect();
    assert.equal(client.era, 'legacy');
    assert.equal(typeof client.sessionId, 'string');
    const result = await client.callTool('whoami', {});
    assert.match(JSON.stringify(result), /alice/);
    await client.disconnect();
    assert.equal(seen.signIns.length, 1);
    assert.deepEqual(seen.errors, []);
  });

  await check('an expired token is refreshed with the refresh token, without a sign-in', async () => {
    const expired = { ...kept, tokens: { ...kept.tokens, expiresAt: Date.now() - 1000 } };
    const { client, seen } = signedClient(url, { load: () => expired });
    await client.connect();
    await client.callTool('whoami', {});
    await client.disconnect();
    assert.deepEqual(seen.signIns, []);
    assert.equal(seen.saved.length, 1);
    assert.notEqual(seen.saved[0].tokens.accessToken, kept.tokens.accessToken);
    assert.equal(seen.saved[0].clientId, kept.clientId);
    // The provider may rotate refresh tokens: what was saved is what holds now.
    kept = seen.saved[0];
  });

  await check('concurrent 401s share one round: one refresh for two requests', async () => {
    // Two tools/call POSTs go out without their token (this transport fetch strips it) and are
    // refused; the token request of the round is held until both were, so the second challenge
    // arrives while the first round is in progress.
    let stripped = 0;
    let bothRefused;
    const refused = new Promise((resolve) => { bothRefused = resolve; });
    const tokenRequests = [];
    const seen = { signIns: [], saved: [], errors: [] };
    const transport = createFetchTransport({
      url,
      fetch: async (request) => {
        const body = request.method === 'POST' ? await request.clone().text() : '';
        if (stripped < 2 && body.includes('"tools/call"')) {
          stripped += 1;
          const bare = new Request(request);
          bare.headers.delete('authorization');
          const answer = await fetch(bare);
          if (stripped === 2) bothRefused();
          return answer;
        }
        return fetch(request);
      },
      auth: {
        redirectUri: REDIRECT_URI,
        signIn: async (at) => { seen.signIns.push(at); return walkSignIn(at); },
        load: () => kept,
        save: (credentials) => seen.saved.push(credentials),
        fetch: async (request) => {
          if (new URL(request.url).pathname === '/token') {
            tokenRequests.push(await request.clone().text());
            await refused;
          }
          return fetch(request);
        },
      },
    });
    const client = createMCPClient({ transport, name: 'client-auth', version: '0.0.0' });
    client.on('error', (e) => seen.errors.push(e.message));
    await client.connect();
    const [a, b] = await Promise.all([client.callTool('whoami', {}), client.callTool('whoami', {})]);
    await client.disconnect();
    assert.equal(stripped, 2);
    assert.match(JSON.stringify(a), /alice/);
    assert.match(JSON.stringify(b), /alice/);
    assert.equal(tokenRequests.length, 1, 'one round');
    assert.match(tokenRequests[0], /grant_type=refresh_token/);
    assert.deepEqual(seen.signIns, []);
    assert.equal(seen.saved.length, 1);
    assert.deepEqual(seen.errors, []);
    kept = seen.saved[0];
  });

  await check('a refused token and a refused refresh lead to a new sign-in', async () => {
    const forged = { ...kept, tokens: { accessToken: 'forged', refreshToken: 'forged', scope: 'mcp:tools' } };
    const { client, seen } = signedClient(url, { load: () => forged });
    await client.connect();
    await client.disconnect();
    assert.equal(seen.signIns.length, 1);
    assert.equal(seen.saved.length, 1);
  });
}

if (url) {
  await check('a redirect whose state was changed is refused: connect fails, the error says why', async () => {
    const { client, seen } = signedClient(url, {
      signIn: async (at) => {
        const back = new URL(await walkSignIn(at));
        back.searchParams.set('state', 'forged');
        return back.href;
      },
    });
    const e = await rejection(client.connect());
    assert.match(e.message, /401/);
    assert.equal(seen.saved.length, 0);
    assert.ok(seen.errors.some((m) => /state does not match/.test(m)), seen.errors.join('; '));
    assert.ok(!seen.errors.some((m) => /code=/.test(m)), 'no code in the error');
  });

  await check('a rejected sign-in (the user closed the popup) fails the round with its reason', async () => {
    const { client, seen } = signedClient(url, { signIn: async () => { throw new Error('the popup was closed'); } });
    const e = await rejection(client.connect());
    assert.match(e.message, /401/);
    assert.ok(seen.errors.some((m) => /the popup was closed/.test(m)), seen.errors.join('; '));
  });

  await check('malformed auth options throw -32602 naming the member', async () => {
    for (const [auth, at] of [
      [{ signIn: async () => '' }, 'options.auth.redirectUri'],
      [{ redirectUri: REDIRECT_URI }, 'options.auth.signIn'],
      [{ redirectUri: REDIRECT_URI, signIn: async () => '', save: 1 }, 'options.auth.save'],
      [{ redirectUri: REDIRECT_URI, signIn: async () => '', clientSecret: 's' }, 'options.auth.clientSecret'],
      ['yes', 'options.auth'],
    ]) {
      assert.throws(() => createFetchTransport({ url, auth }), (e) => e.code === -32602 && e.data?.path === at, at);
    }
  });
}

clearTimeout(watchdog);
console.log(`client-auth: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);

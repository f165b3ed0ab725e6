#!/usr/bin/env node
// The wasm package's `fetch` handler inside Cloudflare's own runtime: starts `workerd` (the npm
// package `workerd`, which ships the binary) on config.capnp (the module Worker worker.mjs with
// the web-target package: `initSync` with the `.wasm` module) on 127.0.0.1, port 0, reads the
// bound port back from `--control-fd`, polls it until it answers (with a deadline), then drives
// it with the official TS SDK client (a 2025-era handshake), raw 2026-07-28 requests, and our CLI
// (`orkestrel-mcp tools` / `call` with `--era auto|modern|legacy`). Every request is answered
// statelessly: no session id is minted and none is needed. workerd is always stopped.
// Prints `workerd: N passed, M failed`; exit 1 on a failure.
//
//   node tests/wasm/workerd/test.mjs    # after tests/wasm/run.sh has built target/wasm-pkg/web
// Environment: WORKERD (the binary; default: the `workerd` npm package's), WORKERD_ESBUILD (default:
// the `esbuild` npm package's), ORKESTREL_MCP_BIN (the CLI; default target/debug/orkestrel-mcp).
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../../..');
const require = createRequire(import.meta.url);
const workerd = require('workerd'); // { default: the binary's path, version, compatibilityDate }
const workerdBin = process.env.WORKERD ?? workerd.default;
// `workerd serve wrangler.jsonc` bundles `main` with esbuild (the npm package esbuild, its binary).
const esbuild = process.env.WORKERD_ESBUILD ?? join(dirname(require.resolve('esbuild/package.json')), 'bin/esbuild');
const cli = process.env.ORKESTREL_MCP_BIN ?? join(root, 'target/debug/orkestrel-mcp');
const pkg = join(root, 'target/wasm-pkg/web');
const MODERN = '2026-07-28';
// A bound on startup, not a wait: workerd compiles the Wasm module first, which a loaded
// 2-core machine has been seen to take over 15 s for.
const STARTUP_MS = 60000;

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
function finish(code) {
  console.log(`workerd: ${passed} passed, ${failed} failed`);
  process.exit(code);
}

// --- start workerd: port 0, the bound port from the control fd (fd 3), bounded waits ------------
const children = new Set();
function kill(child, signal = 'SIGTERM') {
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
}
process.on('exit', () => children.forEach((c) => kill(c, 'SIGKILL')));
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => process.exit(130));
}
const watchdog = setTimeout(() => {
  console.log('FAIL the test timed out (90 s)');
  failed += 1;
  finish(1);
}, 90000);

/** Serve `config` (a .capnp or a wrangler.jsonc) on 127.0.0.1:0; resolves when /mcp answers. */
async function startWorkerd(config, label) {
  const child = spawn(
    workerdBin,
    ['serve', config, '--socket-addr', 'http=127.0.0.1:0', '--control-fd', '3'],
    { stdio: ['ignore', 'pipe', 'pipe', 'pipe'], env: { ...process.env, WORKERD_ESBUILD: esbuild } },
  );
  children.add(child);
  let stderr = '';
  child.stdout.on('data', (d) => process.stdout.write(`[workerd ${label}] ${d}`));
  child.stderr.on('data', (d) => {
    stderr += d;
    process.stderr.write(`[workerd ${label}] ${d}`);
  });
  const stop = async () => {
    const exited = child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise((r) => child.once('exit', r));
    kill(child);
    let timer;
    const late = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error('workerd still running 5 s after SIGTERM')), 5000);
    });
    try {
      await Promise.race([exited, late]);
    } catch (e) {
      kill(child, 'SIGKILL');
      throw e;
    } finally {
      clearTimeout(timer);
      children.delete(child);
    }
  };
  try {
    const port = await new Promise((resolvePort, reject) => {
      let control = '';
      const timer = setTimeout(() => reject(new Error(`no listen event within ${STARTUP_MS} ms`)), STARTUP_MS);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`workerd exited (${code ?? signal}) before listening: ${stderr}`));
      });
      child.stdio[3].on('data', (d) => {
        control += d;
        for (const line of control.split('\n')) {
          const event = line.trim() && JSON.parse(line);
          if (event?.event === 'listen' && event.socket === 'http') {
            clearTimeout(timer);
            resolvePort(event.port);
          }
        }
      });
    });
    const url = `http://127.0.0.1:${port}/mcp`;
    // Poll until the Worker answers (its GET is a 405), with a deadline.
    const deadline = Date.now() + STARTUP_MS;
    for (;;) {
      try {
        const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
        await r.arrayBuffer();
        if (r.status === 405) return { url, stop };
        throw new Error(`GET /mcp answered ${r.status}`);
      } catch (e) {
        if (Date.now() > deadline) throw new Error(`workerd did not answer within ${STARTUP_MS} ms: ${e}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  } catch (e) {
    await stop().catch(() => {});
    throw e;
  }
}

for (const f of ['orkestrel_mcp.js', 'orkestrel_mcp_bg.wasm']) {
  if (!existsSync(join(pkg, f))) {
    console.log(`FAIL ${join(pkg, f)} is missing: run tests/wasm/run.sh first`);
    failed += 1;
    finish(1);
  }
}
let worker;
await check(`workerd ${workerd.version}: config.capnp (a Wasm module) serves the module Worker on 127.0.0.1`, async () => {
  worker = await startWorkerd(join(here, 'config.capnp'), 'capnp');
});
if (!worker) finish(1);
const { url } = worker;

// --- (1) the official TS SDK client: the 2025-era handshake, statelessly -------------------------
const client = new Client({ name: 'workerd-test', version: '1.0.0' });
const transport = new StreamableHTTPClientTransport(new URL(url));
await check('SDK: connect (initialize over Streamable HTTP), no session minted', async () => {
  await client.connect(transport);
  assert.equal(client.getServerVersion()?.name, 'workerd-worker');
  assert.ok(client.getServerCapabilities()?.tools);
  assert.equal(transport.sessionId, undefined);
});
await check('SDK: tools/list', async () => {
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name), ['echo', 'add', 'count', 'fail']);
  assert.deepEqual(tools[0].inputSchema.required, ['text']);
});
await check('SDK: tools/call echo', async () => {
  const r = await client.callTool({ name: 'echo', arguments: { text: 'hello from workerd' } });
  assert.deepEqual(r.content, [{ type: 'text', text: 'hello from workerd' }]);
  assert.notEqual(r.isError, true);
});
await check('SDK: tools/call add (async tool)', async () => {
  const r = await client.callTool({ name: 'add', arguments: { x: 2, y: 5 } });
  assert.equal(r.content[0].text, '7');
});
await check('SDK: tools/call fail → isError result', async () => {
  const r = await client.callTool({ name: 'fail', arguments: {} });
  assert.equal(r.isError, true);
  assert.equal(r.content[0].text, 'this tool always fails');
});
await check('SDK: progress streams over SSE before the result (setTimeout in the Worker)', async () => {
  const seen = [];
  const r = await client.callTool({ name: 'count', arguments: { n: 3 } }, undefined, {
    onprogress: (p) => seen.push([p.progress, p.total, p.message]),
  });
  assert.equal(r.content[0].text, 'counted to 3');
  assert.deepEqual(seen, [[1, 3, 'step 1'], [2, 3, 'step 2'], [3, 3, 'step 3']]);
});
await check('SDK: ping', async () => {
  await client.ping();
});
await client.close();

// --- raw requests: both eras, stateless ---------------------------------------------------------
const post = (body, headers = {}) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
const modernMeta = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
};
const modernHeaders = (method, name) => ({
  'mcp-protocol-version': MODERN,
  'mcp-method': method,
  ...(name ? { 'mcp-name': name } : {}),
});

await check('2025 era: initialize answered with no Mcp-Session-Id', async () => {
  const r = await post(
    {
      jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    },
    { accept: 'application/json' },
  );
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('mcp-session-id'), null);
  const body = await r.json();
  assert.equal(body.result.protocolVersion, '2025-11-25');
  assert.equal(body.result.serverInfo.name, 'workerd-worker');
});
await check('2025 era: tools/call with no prior initialize (stateless), SSE per Accept', async () => {
  const r = await post(
    { jsonrpc: '2.0', id: 'e', method: 'tools/call', params: { name: 'echo', arguments: { text: 'bare' } } },
    { 'mcp-protocol-version': '2025-06-18' },
  );
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'text/event-stream');
  const text = await r.text();
  assert.match(text, /^event: message\ndata: /);
  assert.deepEqual(JSON.parse(text.split('data: ')[1]).result.content, [{ type: 'text', text: 'bare' }]);
});
await check('an id beyond 2^53 comes back exact', async () => {
  const r = await post('{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}', { accept: 'application/json' });
  assert.equal(r.status, 200);
  assert.equal(await r.text(), '{"jsonrpc":"2.0","id":9007199254740993,"result":{}}');
});
await check(`${MODERN}: server/discover`, async () => {
  const r = await post(
    { jsonrpc: '2.0', id: 'd', method: 'server/discover', params: { _meta: modernMeta } },
    { ...modernHeaders('server/discover'), accept: 'application/json' },
  );
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('mcp-session-id'), null);
  const body = await r.json();
  assert.ok(body.result?.supportedVersions?.includes(MODERN), JSON.stringify(body));
  assert.ok(body.result.supportedVersions.includes('2025-11-25'), JSON.stringify(body));
  assert.equal(body.result._meta['io.modelcontextprotocol/serverInfo'].name, 'workerd-worker');
});
await check(`${MODERN}: tools/call echo (Mcp-Method / Mcp-Name), JSON when no notification came first`, async () => {
  const r = await post(
    { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'echo', arguments: { text: 'new era' }, _meta: modernMeta } },
    modernHeaders('tools/call', 'echo'),
  );
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'application/json');
  assert.equal((await r.json()).result.content[0].text, 'new era');
});
await check(`${MODERN}: a missing Mcp-Method header → 400, -32020`, async () => {
  const r = await post(
    { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' }, _meta: modernMeta } },
    { 'mcp-protocol-version': MODERN },
  );
  assert.equal(r.status, 400);
  assert.equal((await r.json()).error.code, -32020);
});
await check('both eras at once: 16 concurrent tools/call count, each its progress (SSE) and its result', async () => {
  const calls = Array.from({ length: 16 }, async (_, i) => {
    const modern = i % 2 === 0;
    const _meta = { progressToken: `p${i}`, ...(modern ? modernMeta : {}) };
    const params = { name: 'count', arguments: { n: 2 }, _meta };
    const r = await post(
      { jsonrpc: '2.0', id: `c${i}`, method: 'tools/call', params },
      modern ? modernHeaders('tools/call', 'count') : { 'mcp-protocol-version': '2025-11-25' },
    );
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'text/event-stream');
    const messages = (await r.text())
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)));
    assert.deepEqual(
      messages.slice(0, -1).map((m) => [m.method, m.params.progressToken, m.params.progress]),
      [['notifications/progress', `p${i}`, 1], ['notifications/progress', `p${i}`, 2]],
    );
    const last = messages.at(-1);
    assert.equal(last.id, `c${i}`);
    assert.equal(last.result.content[0].text, 'counted to 2');
  });
  await Promise.all(calls);
});
await check('statuses: 202, 400, 415, 406, 405, 404', async () => {
  assert.equal((await post('{"jsonrpc":"2.0","method":"notifications/initialized"}')).status, 202);
  const parse = await post('{');
  assert.equal(parse.status, 400);
  assert.equal((await parse.json()).error.code, -32700);
  assert.equal((await post('{}', { 'content-type': 'text/plain' })).status, 415);
  assert.equal((await post('{}', { accept: 'text/html' })).status, 406);
  const get = await fetch(url);
  assert.equal(get.status, 405);
  assert.equal(get.headers.get('allow'), 'POST');
  assert.equal((await fetch(url.replace('/mcp', '/other'), { method: 'POST' })).status, 404);
});

// --- (2) our CLI ----------------------------------------------------------------------------------
function run(args, env = {}) {
  return new Promise((resolveRun, reject) => {
    execFile(cli, args, { timeout: 20000, env: { ...process.env, ...env } }, (error, stdout, stderr) => {
      if (error) reject(new Error(`orkestrel-mcp ${args.join(' ')}: ${error.message}\n${stderr}`));
      else resolveRun(env.RUST_LOG ? { stdout, stderr } : stdout);
    });
  });
}
const haveCli = existsSync(cli);
for (const era of [null, 'modern', 'legacy']) {
  const eraArgs = era ? ['--era', era] : [];
  const label = era ? `--era ${era}` : '(era auto)';
  await check(`CLI ${label}: tools`, async () => {
    assert.ok(haveCli, `${cli} is missing: cargo build --features native --bin orkestrel-mcp`);
    const tools = JSON.parse(await run(['tools', url, ...eraArgs]));
    assert.deepEqual(tools.map((t) => t.name), ['echo', 'add', 'count', 'fail']);
  });
  await check(`CLI ${label}: call echo`, async () => {
    assert.ok(haveCli, `${cli} is missing`);
    assert.equal(JSON.parse(await run(['call', url, 'echo', '--args', '{"text":"hi"}', ...eraArgs])), 'hi');
  });
  await check(`CLI ${label}: call count (progress over SSE first)`, async () => {
    assert.ok(haveCli, `${cli} is missing`);
    assert.equal(JSON.parse(await run(['call', url, 'count', '--args', '{"n":2}', ...eraArgs])), 'counted to 2');
  });
}
await check('CLI: --era auto picks 2026-07-28 (server/discover answered)', async () => {
  assert.ok(haveCli, `${cli} is missing`);
  const { stdout, stderr } = await run(['call', url, 'echo', '--args', '{"text":"auto"}'], {
    RUST_LOG: 'orkestrel_mcp=debug',
    NO_COLOR: '1',
  });
  assert.equal(JSON.parse(stdout), 'auto');
  assert.match(stderr, /era.*2026-07-28/);
});
await check('CLI: call fail exits non-zero with the tool\'s message', async () => {
  assert.ok(haveCli, `${cli} is missing`);
  await assert.rejects(run(['call', url, 'fail']), /this tool always fails/);
});

await check('workerd (config.capnp) stops on SIGTERM', () => worker.stop());

// --- the README's layout: wrangler.jsonc, src/worker.mjs, src/pkg/ --------------------------------
const dir = mkdtempSync(join(tmpdir(), 'orkestrel-mcp-workerd-'));
try {
  mkdirSync(join(dir, 'src/pkg'), { recursive: true });
  copyFileSync(join(here, 'wrangler.jsonc'), join(dir, 'wrangler.jsonc'));
  copyFileSync(join(here, 'worker.mjs'), join(dir, 'src/worker.mjs'));
  for (const f of ['orkestrel_mcp.js', 'orkestrel_mcp_bg.wasm']) copyFileSync(join(pkg, f), join(dir, 'src/pkg', f));
  let layout;
  await check('workerd: the README layout (wrangler.jsonc, src/worker.mjs, src/pkg/) serves', async () => {
    layout = await startWorkerd(join(dir, 'wrangler.jsonc'), 'wrangler');
  });
  if (layout) {
    await check('README layout: the SDK client calls echo', async () => {
      const sdk = new Client({ name: 'workerd-test', version: '1.0.0' });
      await sdk.connect(new StreamableHTTPClientTransport(new URL(layout.url)));
      const r = await sdk.callTool({ name: 'echo', arguments: { text: 'from the layout' } });
      assert.equal(r.content[0].text, 'from the layout');
      await sdk.close();
    });
    for (const era of ['modern', 'legacy']) {
      await check(`README layout: CLI --era ${era} call add`, async () => {
        assert.ok(haveCli, `${cli} is missing`);
        assert.equal(JSON.parse(await run(['call', layout.url, 'add', '--args', '{"x":2,"y":40}', '--era', era])), 42);
      });
    }
    await check('workerd (wrangler.jsonc) stops on SIGTERM', () => layout.stop());
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
clearTimeout(watchdog);
finish(failed ? 1 : 0);

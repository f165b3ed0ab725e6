#!/usr/bin/env node
// The Worker-style fetch handler of the wasm package, under node behind node_adapter.mjs, driven
// by the official MCP TypeScript SDK client over Streamable HTTP; then raw HTTP checks of the
// statuses and of an id beyond 2^53. Prints `worker: N passed, M failed`; exit 1 on a failure.
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import worker from './worker.mjs';
import { serveWorker } from './node_adapter.mjs';

const watchdog = setTimeout(() => {
  console.error('worker: timed out');
  process.exit(1);
}, 30000);

const { server, url } = await serveWorker(worker);
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

const client = new Client({ name: 'wasm-worker-test', version: '1.0.0' });
await check('connect (initialize over Streamable HTTP)', async () => {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  assert.equal(client.getServerVersion()?.name, 'wasm-worker');
  assert.ok(client.getServerCapabilities()?.tools);
});
await check('tools/list', async () => {
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name), ['echo', 'add', 'count', 'fail']);
  assert.equal(tools[0].description, 'Echo the text back');
  assert.deepEqual(tools[0].inputSchema.required, ['text']);
});
await check('tools/call echo', async () => {
  const r = await client.callTool({ name: 'echo', arguments: { text: 'hello from the SDK' } });
  assert.deepEqual(r.content, [{ type: 'text', text: 'hello from the SDK' }]);
  assert.notEqual(r.isError, true);
});
await check('tools/call add (async tool)', async () => {
  const r = await client.callTool({ name: 'add', arguments: { x: 2, y: 5 } });
  assert.equal(r.content[0].text, '7');
});
await check('tools/call fail → isError result', async () => {
  const r = await client.callTool({ name: 'fail', arguments: {} });
  assert.equal(r.isError, true);
  assert.equal(r.content[0].text, 'this tool always fails');
});
await check('progress notifications reach the SDK over SSE before the result (onprogress)', async () => {
  const seen = [];
  const r = await client.callTool({ name: 'count', arguments: { n: 3 } }, undefined, {
    onprogress: (p) => seen.push([p.progress, p.total, p.message]),
  });
  assert.equal(r.content[0].text, 'counted to 3');
  assert.deepEqual(seen, [[1, 3, 'step 1'], [2, 3, 'step 2'], [3, 3, 'step 3']]);
});
await check('ping', async () => {
  await client.ping();
});
await client.close();

const post = (body, headers = {}) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });
await check('an id beyond 2^53 comes back exact (JSON)', async () => {
  const r = await post('{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}', { accept: 'application/json' });
  assert.equal(r.status, 200);
  assert.equal(await r.text(), '{"jsonrpc":"2.0","id":9007199254740993,"result":{}}');
});
await check('SSE reply per Accept', async () => {
  const r = await post('{"jsonrpc":"2.0","id":"s","method":"ping"}');
  assert.equal(r.headers.get('content-type'), 'text/event-stream');
  assert.equal(await r.text(), 'event: message\ndata: {"jsonrpc":"2.0","id":"s","result":{}}\n\n');
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

server.close();
clearTimeout(watchdog);
console.log(`worker: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);

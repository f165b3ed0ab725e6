#!/usr/bin/env node
// The JS client's task API (the nodejs package) over real Streamable HTTP against the native
// conformance fixture (examples/conformance-server.rs, which serves the suite's `tasks-*` tools),
// in both eras: callToolAsTask, getTask, waitTask (polls, answers the fixture's elicitation through
// `handlers.elicit`), cancelTask, and a tool that is never a task.
// Prints `client-tasks: N passed, M failed`; exit 1 on a failure.
//
//   ORKESTREL_MCP_PKG=target/wasm-pkg/node/orkestrel_mcp.js \
//   CONFORMANCE_SERVER=target/debug/examples/conformance-server node tests/wasm/client_tasks.mjs
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const pkg = process.env.ORKESTREL_MCP_PKG ?? path.join(root, 'target', 'wasm-pkg', 'node', 'orkestrel_mcp.js');
const { createMCPClient, createFetchTransport } = createRequire(import.meta.url)(pkg);
const bin = process.env.CONFORMANCE_SERVER ?? path.join(root, 'target', 'debug', 'examples', 'conformance-server');


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

/** Start the fixture on 127.0.0.1:0; resolve to its /mcp URL. */
function startFixture() {
  const child = spawn(bin, ['127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const ready = new Promise((resolve, reject) => {
    let log = '';
    const timer = setTimeout(() => reject(new Error(`the fixture did not start: ${log}`)), 20000);
    const read = (chunk) => {
      log += chunk;
      const m = /conformance server at (http:\/\/\S+)\s/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`the fixture exited (${code}): ${log}`)); });
  });
  return { child, ready };
}

async function rejection(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

const fixture = startFixture();
// A hang fails the run, and the fixture never outlives it.
const watchdog = setTimeout(() => {
  console.error('client-tasks: timed out');
  fixture.child.kill();
  process.exit(1);
}, 60000);
process.on('exit', () => fixture.child.kill());
let url;
await check('the conformance fixture starts on 127.0.0.1', async () => {
  url = await fixture.ready;
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
});

for (const era of url ? ['legacy', 'modern'] : []) {
  const asked = [];
  const client = createMCPClient({
    transport: createFetchTransport({ url }),
    era,
    name: 'js-tasks',
    handlers: {
      elicit: async (params) => {
        asked.push(params.message);
        return { action: 'accept', content: { confirm: true } };
      },
    },
  });
  await check(`${era}: connect`, async () => {
    await client.connect();
    assert.equal(client.era, era);
  });
  await check(`${era}: callToolAsTask → a task; waitTask polls it to the tool's result`, async () => {
    const call = await client.callToolAsTask('slow_compute', { seconds: 0.2, label: 'js' }, { ttl: 60000 });
    assert.equal(call.type, 'task', JSON.stringify(call));
    const { taskId, status, pollIntervalMs } = call.task;
    assert.equal(typeof taskId, 'string');
    assert.ok(['working', 'completed'].includes(status), status);
    assert.ok(pollIntervalMs > 0, JSON.stringify(call.task));
    const seen = [];
    const result = await client.waitTask(taskId, { onStatus: (t) => seen.push(t.status) });
    assert.equal(result.content[0].text, 'computed js after 0.2s');
    assert.equal(seen.at(-1), 'completed', seen.join());
    assert.equal((await client.getTask(taskId)).status, 'completed');
  });
  await check(`${era}: cancelTask settles a running task as cancelled; waitTask then rejects`, async () => {
    const call = await client.callToolAsTask('slow_compute', { seconds: 30 });
    assert.equal(call.type, 'task');
    await client.cancelTask(call.task.taskId);
    assert.equal((await client.getTask(call.task.taskId)).status, 'cancelled');
    const e = await rejection(client.waitTask(call.task.taskId));
    assert.equal(e.name, 'MCPError');
    assert.equal(e.kind, 'rpc');
    assert.match(e.message, /cancelled/);
  });
  await check(`${era}: a tool that is never a task`, async () => {
    const call = client.callToolAsTask('greet', { name: 'Ada' });
    if (era === 'legacy') {
      const e = await rejection(call); // 2025-11-25: the client asked for a task the tool forbids
      assert.equal(e.kind, 'rpc');
      assert.equal(e.code, -32601);
    } else {
      const r = await call; // 2026-07-28: the server decides and runs it plain
      assert.equal(r.type, 'result', JSON.stringify(r));
      assert.equal(r.result.content[0].text, 'Hello, Ada!');
    }
  });
  if (era === 'modern') {
    await check(`${era}: an elicitation inside a task is answered by handlers.elicit (tasks/update)`, async () => {
      const call = await client.callToolAsTask('confirm_delete', { filename: 'a.txt' });
      assert.equal(call.type, 'task', JSON.stringify(call));
      const seen = [];
      const result = await client.waitTask(call.task.taskId, { onStatus: (t) => seen.push(t.status) });
      assert.equal(result.content[0].text, 'deleted a.txt');
      assert.ok(seen.includes('input_required'), seen.join());
      assert.deepEqual(asked, ['Delete a.txt?']);
    });
  }
  await check(`${era}: an unknown task id is the server's -32602`, async () => {
    const e = await rejection(client.getTask('no-such-task'));
    assert.equal(e.kind, 'rpc');
    assert.equal(e.code, -32602);
  });
  await client.disconnect();
}

fixture.child.kill();
clearTimeout(watchdog);
console.log(`client-tasks: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);

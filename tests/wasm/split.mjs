// The server-only and client-only packages (tests/wasm/build.sh: cargo features js-server and
// js-client, --target web) load under node and work together: the client-only package's client
// connects to the server-only package's server through a JS transport object, lists its tools
// and calls one. Each package carries only its half of the API.
//
//   node tests/wasm/split.mjs [PKG]   # default target/wasm-pkg (after tests/wasm/build.sh)
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const pkg = path.resolve(process.argv[2] ?? path.join(root, 'target', 'wasm-pkg'));

let passed = 0;
let failed = 0;
async function check(name, body) {
  try {
    await body();
    passed += 1;
    console.log(`ok - ${name}`);
  } catch (e) {
    failed += 1;
    console.log(`not ok - ${name}: ${e?.stack ?? e}`);
  }
}
function assert(condition, what) {
  if (!condition) throw new Error(what);
}

async function load(dir) {
  const mod = await import(path.join(pkg, dir, 'orkestrel_mcp.js'));
  mod.initSync({ module: readFileSync(path.join(pkg, dir, 'orkestrel_mcp_bg.wasm')) });
  return mod;
}

const server = await load('web-server');
const client = await load('web-client');

await check('the server-only package has the server and the guards, not the client', () => {
  assert(typeof server.createMCPServer === 'function', 'createMCPServer missing');
  assert(typeof server.isJSONRPCMessage === 'function', 'isJSONRPCMessage missing');
  assert(typeof server.buildToolResult === 'function', 'buildToolResult missing');
  assert(server.createMCPClient === undefined, 'createMCPClient present');
  assert(server.createFetchTransport === undefined, 'createFetchTransport present');
  assert(server.MCP_PROTOCOL_VERSION === client.MCP_PROTOCOL_VERSION, 'constants differ');
});

await check('the client-only package has the client and the guards, not the server', () => {
  assert(typeof client.createMCPClient === 'function', 'createMCPClient missing');
  assert(typeof client.createFetchTransport === 'function', 'createFetchTransport missing');
  assert(typeof client.createWebSocketTransport === 'function', 'createWebSocketTransport missing');
  assert(typeof client.parseJSONRPCMessage === 'function', 'parseJSONRPCMessage missing');
  assert(client.createMCPServer === undefined, 'createMCPServer present');
});

await check('the server-only package answers tools/call over handle', async () => {
  const s = server.createMCPServer({
    name: 'split',
    version: '1.0.0',
    tools: [{ name: 'echo', execute: ({ text }) => `echo: ${text}` }],
  });
  const reply = JSON.parse(
    await s.handle('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}'),
  );
  assert(reply.id === 7 && reply.result.content[0].text === 'echo: hi', JSON.stringify(reply));
});

await check('a string parameter given something else is a TypeError, and the server goes on', async () => {
  const s = server.createMCPServer({
    name: 'split',
    version: '1.0.0',
    tools: [{ name: 'echo', execute: ({ text }) => `echo: ${text}` }],
  });
  for (const bad of [42, {}, true, 10n, Symbol('s'), null, undefined]) {
    let thrown;
    try {
      await s.handle(bad);
    } catch (e) {
      thrown = e;
    }
    assert(thrown instanceof TypeError, `handle(${String(bad)}) threw ${thrown}`);
  }
  for (const call of [() => s.removeTool(5), () => s.on({}, () => {})]) {
    let thrown;
    try {
      call();
    } catch (e) {
      thrown = e;
    }
    assert(thrown instanceof TypeError, `threw ${thrown}`);
  }
  const reply = JSON.parse(await s.handle('{"jsonrpc":"2.0","id":8,"method":"ping"}'));
  assert(reply.id === 8 && typeof reply.result === 'object', JSON.stringify(reply));
});

for (const [era, name] of [
  ['legacy', "the client-only client calls the server-only server (era 'legacy')"],
  ['auto', "the client-only client calls the server-only server (era 'auto')"],
]) {
  await check(name, async () => {
    const s = server.createMCPServer({
      name: 'split',
      version: '1.0.0',
      tools: [{ name: 'add', inputSchema: { type: 'object' }, execute: ({ x, y }) => String(x + y) }],
    });
    let sink;
    const transport = {
      start(given) {
        sink = given;
      },
      async send(message) {
        const reply = await s.dispatch(message);
        if (reply !== undefined) sink.receive(reply);
      },
    };
    const c = client.createMCPClient({ transport, era });
    await c.connect();
    assert(c.serverInfo?.name === 'split', `serverInfo ${JSON.stringify(c.serverInfo)}`);
    const tools = await c.tools();
    assert(tools.length === 1 && tools[0].name === 'add', JSON.stringify(tools));
    const sum = await c.call('add', { x: 2, y: 5 });
    assert(sum === 7, `call gave ${JSON.stringify(sum)}`);
    await c.disconnect();
  });
}

console.log(`split: ${passed} passed, ${failed} failed`);
process.exitCode = failed === 0 ? 0 : 1;

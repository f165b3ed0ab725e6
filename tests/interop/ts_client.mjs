#!/usr/bin/env node
// Interop check: the official MCP TypeScript SDK client drives an orkestrel-mcp server.
//
// Usage:
//   node ts_client.mjs stdio <server-binary>   # spawns `<server-binary> serve --stdio`
//   node ts_client.mjs http  <url>             # e.g. http://127.0.0.1:PORT/mcp
//
// Exit code 0 and a one-line summary on success; exit code 1 and a message naming the
// first mismatch otherwise. The whole run is bounded by INTEROP_TIMEOUT_MS (default 30 s).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const EXPECTED_SERVER_NAME = 'orkestrel-mcp';
const EXPECTED_TOOLS = ['echo', 'add', 'fail', 'sleep'];
const RUN_TIMEOUT_MS = Number(process.env.INTEROP_TIMEOUT_MS ?? 30000);
const REQUEST_TIMEOUT_MS = Math.min(10000, RUN_TIMEOUT_MS);

const [mode, target] = process.argv.slice(2);
if (!['stdio', 'http'].includes(mode) || !target) {
  console.error('usage: node ts_client.mjs stdio <server-binary> | node ts_client.mjs http <url>');
  process.exit(2);
}
const label = `ts ${mode}`;

let stderrBuf = '';
function die(msg) {
  console.error(`${label} FAIL: ${msg}`);
  if (stderrBuf.trim()) console.error(`--- server stderr (last 4 KiB) ---\n${stderrBuf.slice(-4096)}`);
  process.exit(1);
}
function check(cond, msg) {
  if (!cond) throw new AssertionFailure(msg);
}
class AssertionFailure extends Error {}

const watchdog = setTimeout(() => die(`timed out after ${RUN_TIMEOUT_MS} ms`), RUN_TIMEOUT_MS);

const j = (v) => JSON.stringify(v);

function textBlocks(result) {
  return (result.content ?? []).filter((c) => c.type === 'text');
}

function singleText(result, what) {
  const content = result.content ?? [];
  check(content.length === 1, `${what}: expected exactly one content block, got ${content.length}: ${j(content)}`);
  check(content[0].type === 'text', `${what}: expected a text block, got ${j(content[0])}`);
  return content[0].text;
}

async function main() {
  let transport;
  if (mode === 'stdio') {
    transport = new StdioClientTransport({
      command: target,
      args: ['serve', '--stdio'],
      env: { ...process.env }, // pass RUST_LOG etc. through (the SDK default is a small allowlist)
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (d) => {
      stderrBuf += d.toString();
      if (stderrBuf.length > 65536) stderrBuf = stderrBuf.slice(-16384);
    });
  } else {
    transport = new StreamableHTTPClientTransport(new URL(target));
  }

  // Record the raw wire so we can assert on what the server actually sent (not only on what
  // the SDK made of it). Protocol.connect() chains a pre-set onmessage handler.
  const inbound = [];
  const outbound = [];
  transport.onmessage = (msg) => inbound.push(msg);
  const origSend = transport.send.bind(transport);
  transport.send = (msg, opts) => {
    outbound.push(msg);
    return origSend(msg, opts);
  };
  const rawResponseFor = (method, predicate = () => true) => {
    const reqs = outbound.filter((m) => m.method === method && 'id' in m && predicate(m));
    const req = reqs[reqs.length - 1];
    return req && inbound.find((m) => m.id === req.id && ('result' in m || 'error' in m));
  };

  const client = new Client({ name: 'orkestrel-interop-ts', version: '0.0.0' });
  const started = Date.now();
  try {
    await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
  } catch (e) {
    throw new AssertionFailure(`initialize failed: ${e?.message ?? e}`);
  }

  // --- handshake ---
  const init = rawResponseFor('initialize');
  check(init && init.result, `no initialize result on the wire: ${j(init)}`);
  const protocolVersion = init.result.protocolVersion;
  check(typeof protocolVersion === 'string' && protocolVersion.length > 0, `initialize result has no protocolVersion: ${j(init.result)}`);
  const serverInfo = client.getServerVersion();
  check(serverInfo?.name === EXPECTED_SERVER_NAME, `server name: expected ${j(EXPECTED_SERVER_NAME)}, got ${j(serverInfo?.name)}`);
  check(client.getServerCapabilities()?.tools !== undefined, `server capabilities lack "tools": ${j(client.getServerCapabilities())}`);

  const opts = { timeout: REQUEST_TIMEOUT_MS };

  // --- tools/list ---
  const { tools } = await client.listTools(undefined, opts);
  const byName = new Map(tools.map((t) => [t.name, t]));
  for (const name of EXPECTED_TOOLS) {
    const t = byName.get(name);
    check(t, `tools/list lacks ${j(name)} (got ${j([...byName.keys()])})`);
    check(t.inputSchema && typeof t.inputSchema === 'object' && t.inputSchema.type === 'object',
      `tool ${name}: inputSchema must be an object schema with "type":"object", got ${j(t.inputSchema)}`);
  }
  const addOut = byName.get('add').outputSchema;
  check(addOut && typeof addOut === 'object' && !Array.isArray(addOut), `tool add: missing outputSchema (got ${j(addOut)})`);

  // --- echo ---
  const echo = await client.callTool({ name: 'echo', arguments: { text: 'hello interop' } }, undefined, opts);
  check(!echo.isError, `echo: isError must be absent/false, got ${j(echo.isError)}`);
  check(singleText(echo, 'echo') === 'hello interop', `echo: text mismatch: ${j(echo.content)}`);

  // --- add (the SDK also validates structuredContent against add's outputSchema here) ---
  const add = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } }, undefined, opts);
  check(!add.isError, `add: isError must be absent/false, got ${j(add.isError)} ${j(add.content)}`);
  check(singleText(add, 'add') === '5', `add: text mismatch (want "5"): ${j(add.content)}`);
  const sc = add.structuredContent;
  check(sc && typeof sc === 'object' && Object.keys(sc).length === 1 && Number(sc.sum) === 5 && typeof sc.sum === 'number',
    `add: structuredContent must equal {"sum":5}, got ${j(sc)}`);

  // --- fail: a tool-level error (isError result), not a JSON-RPC error ---
  let failHow;
  try {
    const fail = await client.callTool({ name: 'fail', arguments: { message: 'boom' } }, undefined, opts);
    check(fail.isError === true, `fail: expected isError: true, got ${j(fail.isError)} ${j(fail.content)}`);
    check(textBlocks(fail).some((b) => b.text.includes('boom')), `fail: no text block contains "boom": ${j(fail.content)}`);
    failHow = 'isError result';
  } catch (e) {
    if (e instanceof AssertionFailure) throw e;
    const raw = rawResponseFor('tools/call', (m) => m.params?.name === 'fail');
    if (raw && 'error' in raw) {
      throw new AssertionFailure(`fail: server answered with a JSON-RPC error instead of an isError result: ${j(raw.error)}`);
    }
    check(String(e?.message ?? e).includes('boom'), `fail: SDK raised without "boom": ${e?.message ?? e}`);
    failHow = 'SDK raised';
  }
  const rawFail = rawResponseFor('tools/call', (m) => m.params?.name === 'fail');
  check(rawFail && 'result' in rawFail && rawFail.result.isError === true,
    `fail: raw wire response must be a result with isError: true, got ${j(rawFail)}`);

  // --- sleep ---
  const t0 = Date.now();
  const sleep = await client.callTool({ name: 'sleep', arguments: { ms: 10 } }, undefined, opts);
  const sleptMs = Date.now() - t0;
  check(!sleep.isError, `sleep: isError must be absent/false, got ${j(sleep.isError)} ${j(sleep.content)}`);
  check(singleText(sleep, 'sleep') === 'slept 10 ms', `sleep: text mismatch: ${j(sleep.content)}`);

  // --- resources: list and read the built-in text resource ---
  const { resources } = await client.listResources(undefined, opts);
  check(resources.some((r) => r.uri === 'orkestrel://about'), `resources/list lacks orkestrel://about: ${j(resources)}`);
  const read = await client.readResource({ uri: 'orkestrel://about' }, opts);
  check(read.contents?.length === 1 && read.contents[0].text === 'orkestrel-mcp: a Rust MCP server and client.',
    `resources/read orkestrel://about: ${j(read)}`);

  // --- prompts: list and get with an argument ---
  const { prompts } = await client.listPrompts(undefined, opts);
  check(prompts.some((p) => p.name === 'greet'), `prompts/list lacks greet: ${j(prompts)}`);
  const prompt = await client.getPrompt({ name: 'greet', arguments: { name: 'TS' } }, opts);
  check(prompt.messages?.[0]?.role === 'user' && prompt.messages[0].content?.text === 'Please greet TS.',
    `prompts/get greet: ${j(prompt)}`);

  // --- progress: the SDK routes notifications/progress to onprogress ---
  const progress = [];
  const counted = await client.callTool({ name: 'progress', arguments: { steps: 3, ms: 1 } }, undefined,
    { ...opts, onprogress: (p) => progress.push(p) });
  check(singleText(counted, 'progress') === 'done 3 steps', `progress: text mismatch: ${j(counted.content)}`);
  // The server writes every progress notification before the response, but the SDK runs
  // notification handlers in a microtask and responses at once: a notification read in the same
  // chunk as the response can be dropped. So: at least one, in order, a prefix of 1..3 of 3.
  const want = [[1, 3], [2, 3], [3, 3]].slice(0, progress.length);
  check(progress.length >= 1 && j(progress.map((p) => [p.progress, p.total])) === j(want),
    `progress: expected notifications 1..3 of 3 in order, got ${j(progress)}`);

  const elapsed = Date.now() - started;
  await client.close();
  return `${label} ok: protocol=${protocolVersion} server=${serverInfo.name} ${serverInfo.version ?? '?'} ` +
    `tools=${tools.length} calls=5 fail=${failHow} sleep=${sleptMs}ms resources=${resources.length} ` +
    `prompts=${prompts.length} progress=${progress.length} total=${elapsed}ms`;
}

main().then(
  (summary) => {
    clearTimeout(watchdog);
    console.log(summary);
    process.exit(0);
  },
  (e) => die(e instanceof AssertionFailure ? e.message : `unexpected error: ${e?.stack ?? e}`),
);

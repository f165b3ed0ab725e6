// Interop: the official TypeScript SDK (@modelcontextprotocol/sdk 1.32.2) against
// `orkestrel-mcp serve --http`: Streamable HTTP with sessions and resumption, and WebSocket.
//
// Usage: node ts_sessions.mjs http://127.0.0.1:PORT/mcp   (node >= 22 for the WebSocket client;
// TS_SESSIONS_HTTP_ONLY=1 skips it)
// Exit status 0 when every check passed; 1 otherwise. INTEROP_TIMEOUT_MS bounds the whole run.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import { CallToolResultSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const url = process.argv[2];
if (!url) {
  console.error('usage: node ts_sessions.mjs http://127.0.0.1:PORT/mcp');
  process.exit(2);
}
const wsUrl = url.replace(/^http/, 'ws');
const bound = Number(process.env.INTEROP_TIMEOUT_MS ?? 30000);
setTimeout(() => {
  console.error(`ts-sessions: timed out after ${bound} ms`);
  process.exit(1);
}, bound).unref();

let failures = 0;
function check(name, ok, detail) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ts-sessions: ${name}${ok || detail === undefined ? '' : ` (${JSON.stringify(detail)})`}`);
  if (!ok) failures += 1;
}
const text = (result) => result?.content?.[0]?.text;
const newClient = () => new Client({ name: 'orkestrel-interop-sessions', version: '0.0.0' });
async function until(predicate, what) {
  const deadline = Date.now() + 10000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`waited too long for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function sessions() {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = newClient();
  const logs = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params.data));
  await client.connect(transport);
  const first = transport.sessionId;
  check('initialize mints a visible-ASCII session id', typeof first === 'string' && /^[\x21-\x7e]+$/.test(first), first);

  const { tools } = await client.listTools();
  check('tools/list in the session', tools.some((t) => t.name === 'progress'), tools.map((t) => t.name));

  const progress = [];
  const result = await client.callTool({ name: 'progress', arguments: { steps: 3, ms: 5 } }, undefined, {
    onprogress: (p) => progress.push(p.progress),
  });
  check('a tool streams progress on the POST stream', JSON.stringify(progress) === '[1,2,3]', progress);
  check('a tool streams log messages on the POST stream', logs.length === 3, logs);
  check('the call answers after its notifications', text(result) === 'done 3 steps', result);

  // Resumption: drop the connection mid-call, resume the POST stream by GET + Last-Event-ID.
  const tokens = [];
  const pending = client
    .request({ method: 'tools/call', params: { name: 'progress', arguments: { steps: 4, ms: 150 } } }, CallToolResultSchema, {
      onresumptiontoken: (t) => tokens.push(t),
    })
    .then(
      () => 'resolved',
      () => 'rejected',
    );
  await until(() => tokens.length >= 2, 'a priming event and a first event');
  await transport.close();
  check('closing the transport ends the first request', (await pending) === 'rejected');

  const resumedTransport = new StreamableHTTPClientTransport(new URL(url), { sessionId: first });
  const resumedClient = newClient();
  await resumedClient.connect(resumedTransport); // a known session: no new initialize
  const resumed = await resumedClient.request(
    { method: 'tools/call', params: { name: 'progress', arguments: { steps: 4, ms: 150 } } },
    CallToolResultSchema,
    { resumptionToken: tokens.at(-1), onresumptiontoken: (t) => tokens.push(t) },
  );
  check('a dropped POST stream resumes by GET with Last-Event-ID', text(resumed) === 'done 4 steps', resumed);
  check('event ids are unique', new Set(tokens).size === tokens.length, tokens);

  // Termination: DELETE, then the id is gone.
  await resumedTransport.terminateSession();
  check('terminateSession clears the id', resumedTransport.sessionId === undefined);
  const after = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': first },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });
  check('a terminated session answers 404', after.status === 404, after.status);
  await resumedClient.close();

  // Re-initialize: a new id.
  const again = new StreamableHTTPClientTransport(new URL(url));
  const againClient = newClient();
  await againClient.connect(again);
  check('re-initialize mints a new id', again.sessionId && again.sessionId !== first, again.sessionId);
  await again.terminateSession();
  await againClient.close();
}

async function websocket() {
  if (typeof WebSocket === 'undefined') {
    check('WebSocket client (needs node >= 22 or --experimental-websocket)', false, process.version);
    return;
  }
  const transport = new WebSocketClientTransport(new URL(wsUrl));
  const client = newClient();
  await client.connect(transport);
  const { tools } = await client.listTools();
  check('ws: tools/list', tools.some((t) => t.name === 'echo'), tools.map((t) => t.name));
  const [slow, fast] = await Promise.all([
    client.callTool({ name: 'sleep', arguments: { ms: 300 } }),
    client.callTool({ name: 'echo', arguments: { text: 'fast' } }),
  ]);
  check('ws: concurrent calls answered by id', text(slow) === 'slept 300 ms' && text(fast) === 'fast', [slow, fast]);
  const progress = [];
  const counted = await client.callTool({ name: 'progress', arguments: { steps: 2, ms: 5 } }, undefined, {
    onprogress: (p) => progress.push(p.progress),
  });
  // The SDK runs notification handlers a microtask later than response handlers, so a progress
  // notification that arrives in the same socket read as the response finds its handler gone
  // ("unknown token"); the server sends both steps before the response (tests/websocket.rs).
  check('ws: progress notifications on the socket', progress[0] === 1 && text(counted) === 'done 2 steps', progress);
  await client.close();
}

try {
  await sessions();
  // TS_SESSIONS_HTTP_ONLY=1: behind an HTTP-only proxy (tests/redis.rs, two instances).
  if (process.env.TS_SESSIONS_HTTP_ONLY !== '1') await websocket();
} catch (error) {
  check('no exception', false, String(error?.stack ?? error));
}
console.log(`ts-sessions: ${failures === 0 ? 'all checks passed' : `${failures} check(s) failed`}`);
process.exit(failures === 0 ? 0 : 1);

//! The TypeScript declarations of the JS client (`createMCPClient`, its options, events and
//! transports), emitted into the package's `.d.ts` by wasm-bindgen.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_CLIENT: &'static str = r#"
/** What an `MCPClient` reports to `on` listeners (seed `MCPClientEventMap`). */
export interface MCPClientEventMap {
  connect: [];
  disconnect: [cause: string];
  notification: [message: JSONRPCRequest];
  error: [error: MCPError];
}
export interface MCPClient {
  /** Subscribe to a client event; a listener's throw is logged, never breaking the client. */
  on<K extends keyof MCPClientEventMap>(event: K, listener: (...args: MCPClientEventMap[K]) => void): void;
}
/** Per-request options. */
export interface MCPRequestOptions {
  /** This request's deadline in ms (default: the client's `timeout`). */
  timeout?: number;
  /** Sees each `notifications/progress` the server sends for this request (the request then
   * carries `_meta.progressToken`); a throw is logged, never breaking the client. */
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /** On the 2026-07-28 wire, the server's `notifications/message` at this level and above for
   * this request (`_meta["io.modelcontextprotocol/logLevel"]`, which replaces
   * `logging/setLevel` there); ignored in the handshake era (use `setLoggingLevel`). */
  logLevel?: MCPLoggingLevel;
}
/**
 * A transport written in JS: `start` (optional) gets the sink to report what arrives;
 * `send` writes one message; `close` (optional) releases it.
 */
export interface MCPCustomTransport {
  start?(sink: MCPTransportSink): void | Promise<void>;
  send(message: JSONRPCMessage): void | Promise<void>;
  close?(): void | Promise<void>;
}
/** Options for `createMCPClient` (seed `MCPClientOptions`). */
export interface MCPClientOptions {
  transport: MCPTransport | MCPCustomTransport;
  /** The per-request deadline in ms (default 30 000). */
  timeout?: number;
  /** `clientInfo.name` (default `'orkestrel-mcp'`). */
  name?: string;
  /** `clientInfo.version` (default this package's version). */
  version?: string;
  /** The protocol version offered in `initialize` (default `MCP_PROTOCOL_VERSION`). */
  protocolVersion?: string;
  /** The protocol era. `'auto'` (default, as the Rust client) probes with `server/discover` on
   * the 2026-07-28 wire and falls back to the `initialize` handshake when the server is older;
   * `'modern'` skips the probe; `'legacy'` speaks the handshake only. Over HTTP a modern request
   * carries the MCP-Protocol-Version, Mcp-Method, Mcp-Name and Mcp-Param-* headers: from a page
   * on another origin the server's CORS must allow them (`orkestrel-mcp serve --cors <origin>`
   * does), or the browser blocks the probe and `connect` fails; pass `'legacy'` for such a
   * server. */
  era?: 'auto' | 'legacy' | 'modern';
  /** What answers the server's requests to the client — JSON-RPC requests in the handshake era,
   * input requests on the 2026-07-28 wire (a `tools/call` round, or a task's `input_required`
   * while `waitTask` waits). Each function may return a promise; a throw or a rejection answers
   * `-32603`. The capabilities declared are those of the functions given (`elicit`:
   * `elicitation.form`, `createMessage`: `sampling`, `listRoots`: `roots`). */
  handlers?: MCPClientHandlers;
  /** Sees every JSON-RPC message sent and received (a traffic log). */
  trace?: (direction: 'send' | 'receive', message: JSONRPCMessage | JSONRPCMessage[]) => void;
}
/** The `handlers` option of `createMCPClient` (params and answers are the spec's shapes). */
export interface MCPClientHandlers {
  /** `elicitation/create` (form mode): resolve to `{ action: 'accept' | 'decline' | 'cancel', content? }`. */
  elicit?: (params: { message: string; requestedSchema: Record<string, unknown>; [key: string]: unknown }) => unknown;
  /** `sampling/createMessage`: resolve to `{ role, content, model, stopReason? }`. */
  createMessage?: (params: Record<string, unknown>) => unknown;
  /** `roots/list`: resolve to `{ roots: { uri: string; name?: string }[] }`. */
  listRoots?: () => unknown;
}
/** Options for `callToolAsTask`. */
export interface MCPTaskCallOptions {
  /** The TTL asked for on 2025-11-25 (`params.task.ttl`, ms); the server may cut it. On
   * 2026-07-28 the server decides and this is unused. */
  ttl?: number;
}
/** Options for `waitTask`. */
export interface MCPWaitTaskOptions {
  /** Sees each state of the task while waiting (a throw is logged, never stopping the wait). */
  onStatus?: (task: MCPTask) => void;
  /** The whole wait's deadline in ms (default: none); then it rejects with `kind: 'timeout'` and
   * the task runs on (cancel it with `cancelTask`). */
  timeout?: number;
}
/** A task, in the 2026-07-28 names in both eras. */
export interface MCPTask {
  taskId: string;
  status: 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
  statusMessage?: string;
  /** The TTL from creation in ms; absent: unlimited. */
  ttlMs?: number;
  /** The polling interval the server suggests, in ms. */
  pollIntervalMs?: number;
  /** The tool's result, inlined by a 2026-07-28 `tasks/get` once `completed`. */
  result?: MCPToolResult;
  /** The JSON-RPC error, inlined by a 2026-07-28 `tasks/get` once `failed`. */
  error?: { code: number; message: string; data?: unknown };
  /** The pending input requests by key (2026-07-28, `input_required`). */
  inputRequests?: Record<string, { method: string; params?: Record<string, unknown> }>;
}
/** What `callToolAsTask` resolves to: the task, or the result when the server ran the tool plain. */
export type MCPToolCall = { type: 'task'; task: MCPTask } | { type: 'result'; result: MCPToolResult };
/** A server's identity (`serverInfo`). */
export type MCPServerImplementation = MCPInitializeResult['serverInfo'];
/** The `server/discover` result of a 2026-07-28 server. */
export interface MCPDiscoverResult {
  supportedVersions: string[];
  capabilities: Record<string, unknown>;
  instructions?: string;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}
/** Options for `createFetchTransport`. */
export interface MCPFetchTransportOptions {
  /** The Streamable HTTP endpoint, e.g. `http://127.0.0.1:3000/mcp`. */
  url: string;
  /** Extra headers sent with every request (e.g. `Authorization`). */
  headers?: Record<string, string>;
  /** The `fetch` to use (default `globalThis.fetch`), e.g. `(r) => server.fetch(r)`. */
  fetch?: (request: Request) => Promise<Response>;
  /** The deadline of each HTTP exchange in ms, resumes included (default: none). */
  timeout?: number;
}
/** Options for `createWebSocketTransport`. */
export interface MCPWebSocketTransportOptions {
  /** A `ws://` or `wss://` URL, e.g. `ws://127.0.0.1:3000/mcp`. */
  url: string;
}
/** The `Error` an `MCPClient` rejects with: an `MCPError` with the failure's `kind`. */
export interface MCPClientError extends MCPError {
  kind: 'rpc' | 'tool' | 'timeout' | 'closed' | 'transport' | 'session-expired' | 'invalid-response'
    | 'unsupported-version' | 'invalid-arguments' | 'not-connected' | 'not-declared'
    | 'too-many-pending' | 'skill-verification';
}
"#;

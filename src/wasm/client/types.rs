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
  /** The protocol version offered in `initialize` (default the newest spoken, `2025-11-25`; the seed's `MCP_PROTOCOL_VERSION` is `2025-06-18`). */
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
  /** Extra headers sent with every request (e.g. `Authorization`): an object, a `Headers`, or `[name, value]` pairs. */
  headers?: Record<string, string> | Headers | [string, string][];
  /** The `fetch` to use (default `globalThis.fetch`), e.g. `(r) => server.fetch(r)`. */
  fetch?: (request: Request) => Promise<Response>;
  /** The deadline of each HTTP exchange in ms, resumes included (default: none). */
  timeout?: number;
  /** OAuth 2.1 toward a protected server (MCP authorization): on a `401` / `403` the transport
   * finds the authorization server, registers or names the client, signs the user in through
   * `auth.signIn` (PKCE, `state`, `iss`, `resource` checked by the library), sends the token with
   * every request and refreshes it when it expires. */
  auth?: MCPClientAuthOptions;
}
/** The `auth` option of `createFetchTransport`: how this client signs in. */
export interface MCPClientAuthOptions {
  /** Where the authorization server sends the user back, e.g. a page of this origin
   * (`https://app.example/callback.html`); registered with the client. */
  redirectUri: string;
  /** Send the user to `url` (the authorization endpoint, e.g. in a popup) and resolve with the URL
   * the authorization server redirected to: `redirectUri` with its `code`, `state` and `iss`
   * query. A rejection ends the round (the `401` stands; the client's `error` listeners hear why). */
  signIn(url: string): Promise<string>;
  /** A pre-registered client id (default: a Client ID Metadata Document when `clientMetadataUrl`
   * is given and the server supports them, else dynamic registration as a `web` client). */
  clientId?: string;
  /** The pre-registered client's secret (a confidential client; needs `clientId`). */
  clientSecret?: string;
  /** The HTTPS URL of this client's Client ID Metadata Document, used as its `client_id` where
   * the authorization server says `client_id_metadata_document_supported`. */
  clientMetadataUrl?: string;
  /** `client_name` in a dynamic registration (default `'orkestrel-mcp'`). */
  clientName?: string;
  /** The scope to ask for when the server's challenge names none (default: the server's
   * `scopes_supported`). */
  scope?: string;
  /** What was kept for this server (called once, when the transport is created); `null` or
   * `undefined`: nothing. A value that is not credentials is ignored (a sign-in follows). */
  load?(): MCPStoredCredentials | null | undefined;
  /** Keep `credentials` (after each sign-in or refresh), e.g. in `localStorage`. They hold
   * tokens (and a client secret, if any): keep them where only this app reads them. */
  save?(credentials: MCPStoredCredentials): void | Promise<void>;
  /** The `fetch` for the authorization server's endpoints (default `globalThis.fetch`); called
   * with `redirect: 'manual'` requests. */
  fetch?: (request: Request) => Promise<Response>;
}
/** What a token store keeps for one server (`auth.save` / `auth.load`). */
export interface MCPStoredCredentials {
  /** The authorization server (issuer identifier) the client and tokens are bound to. */
  issuer: string;
  /** The client id it knows (registered, pre-registered or a metadata document URL). */
  clientId?: string;
  clientSecret?: string;
  /** `'client_secret_basic'`, `'client_secret_post'` or `'none'`. */
  tokenEndpointAuthMethod?: string;
  tokens?: {
    accessToken: string;
    refreshToken?: string;
    /** When the access token expires, in ms since the epoch (as `Date.now()`). */
    expiresAt?: number;
    /** The scope granted. */
    scope?: string;
  };
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

//! JavaScript bindings (wasm-bindgen), for browsers, Workers and node, under the seed's names.
//!
//! ```text
//!  JS tools ──► createMCPServer ──► MCPServer ─┬─ dispatch(object)  → Promise<response | undefined>
//!  (execute)     (server.rs)        (McpServer) ├─ handle(string)    → Promise<string | undefined>
//!                                               └─ fetch(Request)    → Promise<Response>  (fetch.rs)
//!  guards & builders (guards.rs): isJSONRPCMessage, parseJSONRPCMessage, jsonRPCResult, …
//!  createMCPClient ──► MCPClient ──► MCPTransport: createFetchTransport (fetch + SSE decoder),
//!   (client.rs)       (McpClient)     createWebSocketTransport (subprotocol mcp), or a JS object
//!  JS ⇄ JSON with exact integers (convert.rs)
//! ```
//!
//! Errors thrown to JS are `Error` objects named `MCPError` carrying the JSON-RPC `code` and
//! `data` ([`error_to_js`]). Integer ids are exact: `handle` works on strings (the id never
//! becomes a JS number), and `dispatch` takes and returns a `bigint` for an integer beyond
//! 2^53 − 1 (see [`convert`]).

// With neither `js-server` nor `js-client` both halves are bound (the full package); with one of
// them, only that half (the server-only or the client-only package: the other half's core code
// is then never linked in). The guards and builders, and the JSON conversion, are in both.
#[cfg(any(feature = "js-server", not(feature = "js-client")))]
pub mod auth;
#[cfg(any(feature = "js-client", not(feature = "js-server")))]
pub mod client;
#[cfg(any(feature = "js-server", not(feature = "js-client")))]
pub mod context;
pub mod convert;
#[cfg(any(feature = "js-server", not(feature = "js-client")))]
pub mod fetch;
pub mod guards;
#[cfg(any(feature = "js-server", not(feature = "js-client")))]
pub mod server;

use js_sys::Reflect;
use wasm_bindgen::prelude::*;

use crate::wire::jsonrpc::ErrorObject;

#[cfg(any(feature = "js-client", not(feature = "js-server")))]
pub use client::fetch::create_fetch_transport;
#[cfg(any(feature = "js-client", not(feature = "js-server")))]
pub use client::websocket::create_websocket_transport;
#[cfg(any(feature = "js-client", not(feature = "js-server")))]
pub use client::{client_error_to_js, create_mcp_client, Client, Transport};
#[cfg(any(feature = "js-server", not(feature = "js-client")))]
pub use context::ToolContext;
#[cfg(any(feature = "js-server", not(feature = "js-client")))]
pub use server::{create_mcp_server, Server};

/// A binding's future as a JS `Promise` (`future_to_promise`), boxed first: wasm-bindgen-futures'
/// promise and task glue (~650 bytes of code per future type) is then instantiated once for every
/// binding instead of once per binding.
pub(crate) fn promise(
    future: impl std::future::Future<Output = Result<JsValue, JsValue>> + 'static,
) -> js_sys::Promise {
    let future: crate::BoxFuture<'static, Result<JsValue, JsValue>> = Box::pin(future);
    wasm_bindgen_futures::future_to_promise(future)
}

/// Run a future in the background (`spawn_local`), boxed first: one instantiation of the task
/// glue for every spawn (as [`promise`]).
pub(crate) fn spawn(future: impl std::future::Future<Output = ()> + 'static) {
    let future: crate::BoxFuture<'static, ()> = Box::pin(future);
    wasm_bindgen_futures::spawn_local(future);
}

/// A JS `Error` named `MCPError` with `code` and (when present) `data` from the error object.
pub fn error_to_js(error: &ErrorObject) -> JsValue {
    let e = js_sys::Error::new(&error.message);
    e.set_name("MCPError");
    let _ = Reflect::set(
        &e,
        &"code".into(),
        &JsValue::from_f64(f64::from(error.code.0)),
    );
    if let Some(data) = &error.data {
        let _ = Reflect::set(&e, &"data".into(), &convert::to_js(data));
    }
    e.into()
}

/// What a thrown JS value says: an error's `message`, a string itself, or the value's JSON text.
pub fn error_message(value: &JsValue) -> String {
    if let Some(s) = value.as_string() {
        return s;
    }
    if value.is_object() {
        if let Some(message) = Reflect::get(value, &"message".into())
            .ok()
            .and_then(|m| m.as_string())
        {
            return message;
        }
    }
    if value.is_undefined() {
        return "undefined".to_owned();
    }
    if value.is_symbol() {
        // `Symbol(description)`: JSON has no symbols (from_js would say `null`).
        return String::from(value.unchecked_ref::<js_sys::Symbol>().to_string());
    }
    convert::from_js(value).map_or_else(|e| e, |v| crate::wire::json_text::to_text(&v))
}

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** A JSON value. Integers beyond ±(2^53 − 1) are `bigint`, up to 64 bits; a longer integer in a value is read as a `number` (nearest double) — only request ids keep any length exact. */
export type JSONValue = null | boolean | number | bigint | string | JSONValue[] | { [key: string]: JSONValue };
/** A request id: a string or an integer (`bigint` beyond 2^53 − 1). */
export type RequestId = string | number | bigint;
/** A request (with `id`) or a notification (without). */
export interface JSONRPCRequest {
  jsonrpc: '2.0';
  method: string;
  id?: RequestId;
  params?: Record<string, unknown>;
}
/** The `error` member of a failed response. */
export interface JSONRPCErrorData {
  code: number;
  message: string;
  data?: unknown;
}
/** A successful response. */
export interface JSONRPCResultResponse {
  jsonrpc: '2.0';
  id: RequestId;
  result: unknown;
}
/** A failed response (`id` is `null` when the request's id could not be read). */
export interface JSONRPCErrorResponse {
  jsonrpc: '2.0';
  id: RequestId | null;
  error: JSONRPCErrorData;
}
/** A response: exactly one of `result` and `error`. */
export type JSONRPCResponse = JSONRPCResultResponse | JSONRPCErrorResponse;
/** Any JSON-RPC message. */
export type JSONRPCMessage = JSONRPCRequest | JSONRPCResponse;
/** One content block of a tool result. */
export type MCPContent =
  | { type: 'text'; text: string; annotations?: Record<string, unknown> }
  | { type: 'image'; data: string; mimeType: string; annotations?: Record<string, unknown> }
  | { type: 'audio'; data: string; mimeType: string; annotations?: Record<string, unknown> }
  | { type: 'resource_link'; uri: string; name: string; mimeType?: string; description?: string; title?: string }
  | { type: 'resource'; resource: { uri: string; mimeType?: string; text?: string; blob?: string }; annotations?: Record<string, unknown> };
/** The `tools/call` result. */
export interface MCPToolResult {
  content: MCPContent[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}
/** A JSON Schema object (an `inputSchema` / `outputSchema`). */
export type JSONSchema = Record<string, unknown>;
/** One `tools/list` entry. */
export interface MCPToolDescriptor {
  name: string;
  title?: string;
  description?: string;
  inputSchema: JSONSchema;
  outputSchema?: JSONSchema;
  annotations?: Record<string, unknown>;
}
/**
 * A tool written in JS. `execute` gets the call's `arguments` and returns a value or a Promise:
 * a string becomes one text block; an object shaped like an `MCPToolResult` (a `content` array)
 * is the result as is; `undefined` is an empty result; anything else becomes its JSON text.
 * A throw or a rejection becomes an `isError: true` result carrying the error's message.
 */
export interface MCPTool {
  name: string;
  title?: string;
  description?: string;
  /** The schema of the arguments object: its `type` must be `'object'` (default `{ type: 'object' }`). */
  inputSchema?: JSONSchema;
  /** The schema of `structuredContent`: its `type` must be `'object'`. */
  outputSchema?: JSONSchema;
  annotations?: Record<string, unknown>;
  execute(args: Record<string, unknown>, context: MCPToolContext): unknown | Promise<unknown>;
}
/** Options for `createMCPServer`. */
export interface MCPServerOptions {
  name: string;
  version: string;
  tools?: readonly MCPTool[];
  /** `instructions` for the `initialize` result. */
  instructions?: string;
  /** The path `fetch` serves (default `'/mcp'`; it starts with `/`, else `createMCPServer` throws); any other path is a 404. */
  path?: string;
  /** Receives what a `request` listener throws (default: `console.error`). */
  error?: (error: unknown, event: 'request') => void;
  /** Require a bearer token on `fetch` (an OAuth 2.1 resource server): 401 / 403 with
   * `WWW-Authenticate`, and the RFC 9728 metadata at `/.well-known/oauth-protected-resource`. */
  auth?: MCPAuthOptions;
}
/** Who a verified bearer token speaks for. */
export interface MCPIdentity {
  subject?: string;
  clientId?: string;
  scopes?: string[];
  claims?: Record<string, unknown>;
}
/** `createMCPServer`'s `auth` option. */
export interface MCPAuthOptions {
  /** This server's URL: the metadata's `resource`, the audience tokens are for. */
  resource: string;
  /** The authorization servers' issuer URLs. */
  authorizationServers: string[];
  /** Scopes listed in the metadata. */
  scopesSupported?: string[];
  /** Scopes every token must carry (403 `insufficient_scope` otherwise). */
  requiredScopes?: string[];
  /** Who `token` speaks for; `null`, a throw or a rejection refuses it (401 `invalid_token`). */
  verify(token: string): MCPIdentity | null | undefined | Promise<MCPIdentity | null | undefined>;
}
/** The `initialize` result. */
export interface MCPInitializeResult {
  protocolVersion: string;
  capabilities: Record<string, unknown>;
  serverInfo: { name: string; version: string; title?: string };
  instructions?: string;
}
/** The `Error` thrown by this package: the JSON-RPC `code` and `data` are kept. */
export interface MCPError extends Error {
  name: 'MCPError';
  code: number;
  data?: unknown;
}
"#;

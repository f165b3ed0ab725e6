//! The stateless Streamable HTTP route as a Worker-style `fetch(Request) → Response` handler,
//! with the statuses and the two protocol eras of the native route (`native::http`):
//!
//! | request | answer |
//! |---|---|
//! | `POST {path}`, a request | `200`, the response as JSON, or as SSE when the client accepts `text/event-stream` (notifications the handler sends come first, live); a 2026-07-28 request whose response comes before any notification gets JSON with its status (400 / 404 for the §2.6 errors) |
//! | `POST`, a notification or a response | `202`, no body |
//! | `POST`, malformed JSON or an empty body | `400`, `-32700`, id `null` |
//! | `POST`, not a valid message (batch, bad envelope) | `400`, `-32600` (or `-32602` for non-object `params`) |
//! | `POST`, body over 4 MiB | `413`, `-32600` |
//! | `POST`, `Content-Type` absent or not `application/json` | `415`, `-32600` |
//! | `POST`, `MCP-Protocol-Version` unsupported, or repeated with different values | `400`, `-32600` |
//! | `POST`, 2026-07-28 request failing header validation (`Mcp-Method`, `Mcp-Name`, …) | `400`, `-32020` / `-32022` / `-32602` |
//! | `POST`, `Accept` admits neither JSON nor SSE | `406`, `-32600` |
//! | `GET` / `DELETE` / other verbs on `{path}` | `405` with `Allow: POST`, `-32000` |
//! | any other path | `404` |

use std::sync::Arc;

use futures::channel::mpsc;
use futures::StreamExt;
use js_sys::{ArrayBuffer, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::{spawn_local, JsFuture};
use web_sys::{Headers, Request, Response, ResponseInit, TransformStream, Url};

use crate::context::RequestContext;
use crate::era::{self, Era};
use crate::jsonrpc::{ErrorCode, ErrorObject, JsonRpcMessage, JsonRpcRequest, JsonRpcResponse};
use crate::media::{is_json_media_type, Accept, DEFAULT_MAX_BODY_BYTES};
use crate::protocol::is_supported_version;
use crate::server::McpServer;
use crate::sse::encode_event;

/// The version assumed with no `MCP-Protocol-Version` header (spec `basic/transports`, Protocol
/// Version Header), as the native route.
const DEFAULT_HTTP_PROTOCOL_VERSION: &str = "2025-03-26";

/// Answer one request for `server` mounted at `path`.
///
/// # Errors
/// Only when the JS host fails to build a `Response` (not expected).
pub async fn respond(server: McpServer, path: &str, request: Request) -> Result<JsValue, JsValue> {
    let url = Url::new(&request.url())?;
    if url.pathname() != path {
        return build(
            404,
            Some("Not Found"),
            &[("content-type", "text/plain; charset=utf-8")],
        );
    }
    if request.method() != "POST" {
        let body = JsonRpcResponse::error(
            None,
            ErrorObject::new(
                ErrorCode::SERVER_ERROR,
                "Method not allowed: this endpoint serves POST only",
            ),
        );
        return build(
            405,
            Some(&body.to_json()),
            &[("content-type", "application/json"), ("allow", "POST")],
        );
    }
    let headers = request.headers();
    if !headers
        .get("content-type")?
        .is_some_and(|t| is_json_media_type(&t))
    {
        return rpc_error(
            415,
            ErrorObject::invalid_request("Content-Type must be application/json"),
        );
    }
    // The Fetch API joins repeated headers with ", ": every part must agree.
    let header_version = match headers.get("mcp-protocol-version")? {
        None => None,
        Some(joined) => {
            let mut parts = joined.split(',').map(str::trim);
            let first = parts.next().unwrap_or("").to_owned();
            if parts.any(|p| p != first) {
                return rpc_error(
                    400,
                    ErrorObject::invalid_request(
                        "Bad Request: conflicting MCP-Protocol-Version headers",
                    ),
                );
            }
            Some(first)
        }
    };
    let modern_header = header_version
        .as_deref()
        .is_some_and(|v| !era::is_legacy_version(v));
    if let Some(v) = header_version.as_deref().filter(|_| !modern_header) {
        if !is_supported_version(v) {
            return rpc_error(
                400,
                ErrorObject::invalid_request(format!(
                    "Bad Request: unsupported MCP-Protocol-Version {v:?}"
                )),
            );
        }
    }
    let accept = headers.get("accept")?;
    let accept = Accept::parse(accept.as_deref());
    if !accept.json && !accept.sse {
        return rpc_error(
            406,
            ErrorObject::invalid_request("Accept must admit application/json or text/event-stream"),
        );
    }
    let too_large = || {
        rpc_error(
            413,
            ErrorObject::invalid_request(format!("body over {DEFAULT_MAX_BODY_BYTES} bytes")),
        )
    };
    let declared = headers
        .get("content-length")?
        .and_then(|n| n.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > DEFAULT_MAX_BODY_BYTES as u64) {
        return too_large();
    }
    let body = match JsFuture::from(request.array_buffer()?).await {
        Ok(buffer) => Uint8Array::new(buffer.unchecked_ref::<ArrayBuffer>()).to_vec(),
        Err(e) => {
            return rpc_error(
                400,
                ErrorObject::parse_error(format!("body read failed: {}", super::error_message(&e))),
            )
        }
    };
    if body.len() > DEFAULT_MAX_BODY_BYTES {
        return too_large();
    }
    let request_message = match JsonRpcMessage::from_slice(&body) {
        Ok(JsonRpcMessage::Request(request)) => request,
        Ok(other) => {
            server.dispatch(other).await;
            return build(202, None, &[]);
        }
        Err(invalid) => {
            return match invalid.response() {
                Some(response) => json(400, &response),
                None => build(202, None, &[]),
            }
        }
    };
    // Classify by shape (SPEC-2026-07-28 §2.4): modern `_meta`, or a header naming a version
    // outside the handshake era, takes the modern validation path.
    let modern = modern_header || era::has_modern_meta(request_message.params.as_ref());
    let mut ctx = RequestContext::new();
    if modern {
        if let Err(error) = validate_modern(
            &server,
            &headers,
            header_version.as_deref(),
            &request_message,
        ) {
            return json(
                400,
                &JsonRpcResponse::error(Some(request_message.id), error),
            );
        }
        ctx.era = Era::Modern;
        ctx.protocol_version.clone_from(&header_version);
        ctx.transport_version = header_version;
    } else {
        ctx.protocol_version =
            Some(header_version.unwrap_or_else(|| DEFAULT_HTTP_PROTOCOL_VERSION.to_owned()));
    }
    let message = JsonRpcMessage::Request(request_message);
    if accept.sse {
        return stream(server, message, ctx, modern).await;
    }
    match server.dispatch_with(message, ctx).await {
        Some(response) => json(status_of(modern, &response), &response),
        None => build(202, None, &[]),
    }
}

/// The modern checks that need headers, in the order of SPEC-2026-07-28 §2.3 (as the native
/// route): the version header, `_meta`, header vs. body version, then `Mcp-Method`, `Mcp-Name`
/// and `Mcp-Param-*`.
fn validate_modern(
    server: &McpServer,
    headers: &Headers,
    version: Option<&str>,
    request: &JsonRpcRequest,
) -> Result<(), ErrorObject> {
    let version = version.ok_or_else(|| era::header_mismatch("missing MCP-Protocol-Version"))?;
    let meta = era::parse_meta(request.params.as_ref())?;
    era::check_version(&meta, Some(version))?;
    let schema = match (request.method.as_str(), era::expected_name(request)) {
        ("tools/call", Some(name)) => server
            .tools()
            .get(&name)
            .map(|t| t.descriptor().input_schema.clone()),
        _ => None,
    };
    let lookup = |name: &str| headers.get(name).ok().flatten();
    era::validate_headers(&lookup, request, schema.as_ref())
}

/// `400` / `404` for the modern errors of SPEC-2026-07-28 §2.6; `200` otherwise.
fn status_of(modern: bool, response: &JsonRpcResponse) -> u16 {
    match (&response.payload, modern) {
        (Err(e), true)
            if [
                era::HEADER_MISMATCH,
                era::MISSING_REQUIRED_CLIENT_CAPABILITY,
                era::UNSUPPORTED_PROTOCOL_VERSION,
            ]
            .contains(&e.code) =>
        {
            400
        }
        (Err(e), true) if e.code == ErrorCode::METHOD_NOT_FOUND => 404,
        _ => 200,
    }
}

/// What the handler sends on a request's stream.
enum Out {
    Message(String),
    Final(JsonRpcResponse),
}

/// Answer on an SSE stream: notifications the handler sends as they come, then the response.
/// A modern request whose response comes first gets it as JSON with its status instead.
async fn stream(
    server: McpServer,
    message: JsonRpcMessage,
    ctx: RequestContext,
    modern: bool,
) -> Result<JsValue, JsValue> {
    let (tx, mut rx) = mpsc::unbounded::<Out>();
    let notify = tx.clone();
    let ctx = ctx.with_outbound(Arc::new(move |m: JsonRpcMessage| {
        notify.unbounded_send(Out::Message(m.to_json())).is_ok()
    }));
    spawn_local(async move {
        if let Some(response) = server.dispatch_with(message, ctx).await {
            let _ = tx.unbounded_send(Out::Final(response));
        }
        // Close for every sender: a JS tool may keep its context (and so a sender) alive.
        tx.close_channel();
    });
    let first = match rx.next().await {
        None => return build(202, None, &[]),
        Some(Out::Final(response)) if modern => return json(status_of(true, &response), &response),
        Some(first) => first,
    };
    let pipe = TransformStream::new()?;
    let writer = pipe.writable().get_writer()?;
    spawn_local(async move {
        let mut next = Some(first);
        while let Some(out) = next {
            let event = match out {
                Out::Message(json) => encode_event(None, &json),
                Out::Final(response) => encode_event(None, &response.to_json()),
            };
            let chunk = Uint8Array::from(event.as_bytes());
            if JsFuture::from(writer.write_with_chunk(&chunk))
                .await
                .is_err()
            {
                break; // the client went away
            }
            next = rx.next().await;
        }
        let _ = JsFuture::from(writer.close()).await;
    });
    let init = ResponseInit::new();
    init.set_status(200);
    let headers = Headers::new()?;
    headers.set("content-type", "text/event-stream")?;
    headers.set("cache-control", "no-cache")?;
    init.set_headers(&headers);
    Response::new_with_opt_readable_stream_and_init(Some(&pipe.readable()), &init).map(Into::into)
}

fn json(status: u16, response: &JsonRpcResponse) -> Result<JsValue, JsValue> {
    build(
        status,
        Some(&response.to_json()),
        &[("content-type", "application/json")],
    )
}

fn rpc_error(status: u16, error: ErrorObject) -> Result<JsValue, JsValue> {
    json(status, &JsonRpcResponse::error(None, error))
}

fn build(status: u16, body: Option<&str>, headers: &[(&str, &str)]) -> Result<JsValue, JsValue> {
    let init = ResponseInit::new();
    init.set_status(status);
    let h = Headers::new()?;
    for (name, value) in headers {
        h.set(name, value)?;
    }
    init.set_headers(&h);
    Response::new_with_opt_str_and_init(body, &init).map(Into::into)
}

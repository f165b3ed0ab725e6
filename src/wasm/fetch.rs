//! The stateless Streamable HTTP route as a Worker-style `fetch(Request) → Response` handler,
//! with the statuses of the native route (`native::http`):
//!
//! | request | answer |
//! |---|---|
//! | `POST {path}`, a request | `200`, the response as JSON, or as SSE when the client accepts `text/event-stream` (notifications the handler sends come first, live) |
//! | `POST`, a notification or a response | `202`, no body |
//! | `POST`, malformed JSON or an empty body | `400`, `-32700`, id `null` |
//! | `POST`, not a valid message (batch, bad envelope) | `400`, `-32600` (or `-32602` for non-object `params`) |
//! | `POST`, body over 4 MiB | `413`, `-32600` |
//! | `POST`, `Content-Type` present and not `application/json` | `415`, `-32600` |
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
use crate::jsonrpc::{ErrorCode, ErrorObject, JsonRpcMessage, JsonRpcResponse};
use crate::media::{is_json_media_type, Accept, DEFAULT_MAX_BODY_BYTES};
use crate::server::McpServer;
use crate::sse::encode_event;

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
    if let Some(content_type) = headers.get("content-type")? {
        if !is_json_media_type(&content_type) {
            return rpc_error(
                415,
                ErrorObject::invalid_request("Content-Type must be application/json"),
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
    let sse = accept.sse;
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
    let message = match JsonRpcMessage::from_slice(&body) {
        Ok(message) => message,
        Err(invalid) => {
            return match invalid.response() {
                Some(response) => json(400, &response),
                None => build(202, None, &[]),
            }
        }
    };
    if !matches!(message, JsonRpcMessage::Request(_)) {
        server.dispatch(message).await;
        return build(202, None, &[]);
    }
    if sse {
        return stream(server, message);
    }
    match server.dispatch(message).await {
        Some(response) => json(200, &response),
        None => build(202, None, &[]),
    }
}

/// Answer on an SSE stream: notifications the handler sends as they come, then the response.
fn stream(server: McpServer, message: JsonRpcMessage) -> Result<JsValue, JsValue> {
    let pipe = TransformStream::new()?;
    let writer = pipe.writable().get_writer()?;
    let (tx, mut rx) = mpsc::unbounded::<String>();
    let notify = tx.clone();
    let ctx = RequestContext::new().with_outbound(Arc::new(move |m: JsonRpcMessage| {
        notify
            .unbounded_send(encode_event(None, &m.to_json()))
            .is_ok()
    }));
    spawn_local(async move {
        let run = async move {
            if let Some(response) = server.dispatch_with(message, ctx).await {
                let _ = tx.unbounded_send(encode_event(None, &response.to_json()));
            }
            // Close for every sender: a JS tool may keep its context (and so a sender) alive.
            tx.close_channel();
        };
        let pump = async {
            while let Some(event) = rx.next().await {
                let chunk = Uint8Array::from(event.as_bytes());
                if JsFuture::from(writer.write_with_chunk(&chunk))
                    .await
                    .is_err()
                {
                    break; // the client went away
                }
            }
            let _ = JsFuture::from(writer.close()).await;
        };
        futures::join!(run, pump);
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

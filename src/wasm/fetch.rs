//! The stateless Streamable HTTP route as a Worker-style `fetch(Request) → Response` handler: a
//! thin driver of the core's plan ([`crate::http::route`], where the decision table is; spec
//! `basic/transports`, <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>).
//! It turns a `web_sys::Request` into an [`HttpRequest`] (the head checked first, then the body
//! read), and the [`Answer`] into a `web_sys::Response`, an event stream piped through a
//! `TransformStream`. Dispatch feeding an event stream runs on `spawn_local`; the handler has no
//! session store, so it answers statelessly, as the native route without sessions.

use std::sync::Arc;

use futures::StreamExt;
use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Headers, Request, Response, ResponseInit, TransformStream, Url};

use crate::http::answer::{Answer, AnswerBody, EventStream};
use crate::http::headers;
use crate::http::request::{Body, HttpRequest};
use crate::http::route::{Head, Route, RouteOptions, Spawn};
use crate::server::McpServer;

/// The spawner of the wasm host: `spawn_local`.
fn spawner() -> Spawn {
    Arc::new(wasm_bindgen_futures::spawn_local::<crate::BoxFuture<'static, ()>>)
}

/// The status of the answer to a request whose client went away (its `signal` aborted) before
/// it was answered: nginx's "client closed request". No one reads it; it only settles the
/// host's promise.
pub const CLIENT_CLOSED_REQUEST: u16 = 499;

/// Answer one request for `server` mounted at `path`, behind the bearer-token gate `auth` when
/// there is one. When the request's `signal` aborts before the answer is ready (the client went
/// away: Deno, Bun and workerd abort it on disconnect), the work is dropped — a running tool is
/// cancelled, its `context.signal` aborts — and the answer is an empty
/// [`CLIENT_CLOSED_REQUEST`]. (Once an event stream is answered, its cancellation does the same:
/// see `pipe`.)
///
/// # Errors
/// What the `Request` threw when one of its members was read (`url`, `method`, `headers`: a
/// hostile or broken object), a `TypeError` when one is not a string, or when the JS host fails
/// to build a `Response` (not expected). A body that cannot be read (already read, locked) is
/// answered `400`.
pub async fn respond(
    server: McpServer,
    path: &str,
    auth: Option<crate::http::auth::Authorizer>,
    request: Request,
) -> Result<JsValue, JsValue> {
    // Read by hand: a host's `Request` may have no `signal` (older runtimes).
    let signal = js_sys::Reflect::get(&request, &"signal".into())
        .ok()
        .filter(JsValue::is_object)
        .map(JsCast::unchecked_into::<web_sys::AbortSignal>);
    let aborted = |signal: &web_sys::AbortSignal| {
        js_sys::Reflect::get(signal, &"aborted".into()).is_ok_and(|a| a.is_truthy())
    };
    if signal.as_ref().is_some_and(aborted) {
        return closed();
    }
    let answer = std::pin::pin!(answer(server, path, auth, request));
    let Some(mut gone) = signal.and_then(OnAbort::new) else {
        return answer.await;
    };
    match futures::future::select(answer, &mut gone.fired).await {
        futures::future::Either::Left((answer, _)) => answer,
        futures::future::Either::Right(_) => closed(),
    }
}

/// The empty answer to a request whose client went away.
fn closed() -> Result<JsValue, JsValue> {
    let init = ResponseInit::new();
    init.set_status(CLIENT_CLOSED_REQUEST);
    Response::new_with_opt_str_and_init(None, &init).map(Into::into)
}

/// A future of a signal's `abort` event. Its listener is removed when it is dropped, so an
/// abort after the answer calls nothing of a future that is gone.
struct OnAbort {
    signal: web_sys::AbortSignal,
    listener: js_sys::Function,
    fired: JsFuture,
}

impl OnAbort {
    /// `None` when the listener cannot be added (a host without `addEventListener` there).
    fn new(signal: web_sys::AbortSignal) -> Option<OnAbort> {
        let mut listener = None;
        let promise = js_sys::Promise::new(&mut |resolve, _| listener = Some(resolve));
        let listener = listener?; // the executor runs at once
        signal
            .add_event_listener_with_callback("abort", &listener)
            .ok()?;
        Some(OnAbort {
            signal,
            listener,
            fired: JsFuture::from(promise),
        })
    }
}

impl Drop for OnAbort {
    fn drop(&mut self) {
        let _ = self
            .signal
            .remove_event_listener_with_callback("abort", &self.listener);
        // Settle the promise ourselves: a `JsFuture` whose promise never settles keeps its
        // callbacks alive for good (a leak per answered request).
        let _ = self.listener.call0(&JsValue::UNDEFINED);
    }
}

async fn answer(
    server: McpServer,
    path: &str,
    auth: Option<crate::http::auth::Authorizer>,
    request: Request,
) -> Result<JsValue, JsValue> {
    let options = RouteOptions {
        path: path.to_owned(),
        ..RouteOptions::default()
    };
    let mut route = Route::new(server, options, spawner());
    if let Some(auth) = auth {
        route = route.with_auth(auth);
    }
    // Every member is read through `Reflect`: a host's or a middleware's `Request` whose getter
    // throws rejects this promise with what it threw, never an exception through the module.
    let text = |name: &str| -> Result<String, JsValue> {
        Reflect::get(&request, &name.into())?
            .as_string()
            .ok_or_else(|| {
                js_sys::TypeError::new(&format!("the Request's {name} is not a string")).into()
            })
    };
    let url = Url::new(&text("url")?)?;
    let mut described = HttpRequest::new(text("method")?, url.pathname());
    described.headers = fields(&Reflect::get(&request, &"headers".into())?)?;
    if let Some(answer) = route.authorize(&mut described).await {
        return response(answer);
    }
    let body = match route.head(&described.method, &described.path, &described.headers) {
        Head::Answer(answer) => return response(answer),
        Head::ReadBody { limit } => read_body(&request, limit).await?,
        Head::NoBody => Body::default(),
    };
    described.body = body;
    response(route.respond_stateless(described).await)
}

/// The request's header fields as the core's pairs. The Fetch API joins repeated fields with
/// `", "`; `MCP-Protocol-Version` (a list), `Mcp-Session-Id` and `Mcp-Method` (values without
/// spaces) are split back into their values, so that differing ones are seen as the conflict
/// they are. (`Mcp-Name` may hold `", "`, a prompt's name, so it stays joined: repeated with
/// different values, it no longer matches the body, `400` `-32020`.) The Fetch API tells no HTTP version (`version` stays `None`).
fn fields(headers: &JsValue) -> Result<Vec<(String, Option<String>)>, JsValue> {
    let mut out = Vec::new();
    let Some(entries) = js_sys::try_iter(headers)? else {
        return Ok(out);
    };
    for entry in entries {
        let entry = entry?;
        let name = Reflect::get_u32(&entry, 0)?.as_string().unwrap_or_default();
        let value = Reflect::get_u32(&entry, 1)?.as_string().unwrap_or_default();
        if name.eq_ignore_ascii_case(headers::MCP_PROTOCOL_VERSION) {
            for part in value.split(',') {
                out.push((name.clone(), Some(part.trim().to_owned())));
            }
        } else if [headers::MCP_SESSION_ID, headers::MCP_METHOD]
            .iter()
            .any(|h| name.eq_ignore_ascii_case(h))
        {
            // Their values hold no spaces: a joined value is repeated fields.
            for part in value.split(", ") {
                out.push((name.clone(), Some(part.to_owned())));
            }
        } else {
            out.push((name, Some(value)));
        }
    }
    Ok(out)
}

/// Read the body, chunk by chunk, keeping at most `limit` bytes: at the first chunk past it the
/// rest is cancelled unread and the body is [`Body::TooLarge`] (a peer's body never grows the
/// module's memory past the limit, however long it streams); a stream that fails is
/// [`Body::Unreadable`], and so is one that cannot be read at all (already read or locked: a
/// middleware read it first), which the route answers `400`.
async fn read_body(request: &Request, limit: usize) -> Result<Body, JsValue> {
    use js_sys::{Function, Promise};
    let stream = Reflect::get(request, &"body".into())?;
    if stream.is_undefined() || stream.is_null() {
        return Ok(Body::Bytes(Vec::new()));
    }
    let reader = Reflect::get(&stream, &"getReader".into())
        .and_then(|get| get.dyn_into::<Function>())
        .and_then(|get| get.call0(&stream));
    let reader = match reader {
        Ok(reader) => reader,
        Err(e) => {
            return Ok(Body::Unreadable(format!(
                "the request's body cannot be read (already read?): {}",
                super::error_message(&e)
            )))
        }
    };
    let method = |name: &str| -> Result<Function, JsValue> {
        Reflect::get(&reader, &name.into())?.dyn_into::<Function>()
    };
    let read = method("read")?;
    let mut bytes = Vec::new();
    loop {
        let next: Promise = read.call0(&reader)?.dyn_into()?;
        let step = match JsFuture::from(next).await {
            Ok(step) => step,
            Err(e) => return Ok(Body::Unreadable(super::error_message(&e))),
        };
        if Reflect::get(&step, &"done".into())?.is_truthy() {
            return Ok(Body::Bytes(bytes));
        }
        let Ok(chunk) = Reflect::get(&step, &"value".into())?.dyn_into::<Uint8Array>() else {
            return Ok(Body::Unreadable("a body chunk that is not bytes".into()));
        };
        let at = bytes.len();
        let len = chunk.length() as usize;
        if len > limit - at {
            // The rest is not read: cancelling lets the host drop it (its promise awaited, so
            // a stream whose cancel fails is no unhandled rejection).
            if let Some(cancelled) = method("cancel")
                .and_then(|cancel| cancel.call0(&reader))
                .ok()
                .and_then(|p| p.dyn_into::<Promise>().ok())
            {
                super::spawn(async move {
                    let _ = JsFuture::from(cancelled).await;
                });
            }
            return Ok(Body::TooLarge);
        }
        bytes.resize(at + len, 0);
        chunk.copy_to(&mut bytes[at..]);
    }
}

/// The core's answer as a `web_sys::Response`.
fn response(answer: Answer) -> Result<JsValue, JsValue> {
    let init = ResponseInit::new();
    init.set_status(answer.status);
    let headers = Headers::new()?;
    for (name, value) in &answer.headers {
        headers.set(name, value)?;
    }
    init.set_headers(&headers);
    match answer.body {
        AnswerBody::Empty => Response::new_with_opt_str_and_init(None, &init),
        AnswerBody::Json(text) => Response::new_with_opt_str_and_init(Some(&text), &init),
        AnswerBody::Text(text) => Response::new_with_opt_str_and_init(Some(text), &init),
        AnswerBody::Events(events) => {
            let readable = pipe(events)?;
            Response::new_with_opt_readable_stream_and_init(Some(&readable), &init)
        }
    }
    .map(Into::into)
}

/// Write `events` into a `TransformStream`, returning its readable side. The readable side
/// cancelled (the client gone) errors the writable one: the events are then dropped at once —
/// not at the next event, which a silent tool may never send — which cancels the request
/// (a JS tool's `context.signal` aborts).
fn pipe(mut events: EventStream) -> Result<web_sys::ReadableStream, JsValue> {
    let pipe = TransformStream::new()?;
    let writer = pipe.writable().get_writer()?;
    super::spawn(async move {
        // Settles only when the writable side errors (or once it is closed, below).
        let mut gone = JsFuture::from(writer.closed());
        loop {
            let event = match futures::future::select(events.next(), &mut gone).await {
                futures::future::Either::Left((Some(event), _)) => event,
                futures::future::Either::Left((None, _)) => break,
                futures::future::Either::Right(_) => return,
            };
            let chunk = Uint8Array::from(event.as_bytes());
            if JsFuture::from(writer.write_with_chunk(&chunk))
                .await
                .is_err()
            {
                return;
            }
        }
        drop(events);
        let _ = JsFuture::from(writer.close()).await;
    });
    Ok(pipe.readable())
}

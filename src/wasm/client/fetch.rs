//! `createFetchTransport`: the Streamable HTTP client transport over `fetch` (seed clause 15;
//! spec [Streamable HTTP](https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http)),
//! for browsers, Workers and node: a thin driver of the core's [`crate::http::exchange`]
//! machine, which decides every header and reads every answer (its module docs hold the table)
//! — the same machine the native transport drives, so both resume an interrupted request
//! stream with `Last-Event-ID` after the server's `retry` and bound each exchange by the
//! `timeout` option.
//!
//! This file only turns the machine's [`Step`]s into `fetch` calls, body-reader reads and
//! timers: `Send` → `fetch(new Request(…))`, `Read` → `reader.read()`, `Wait` → a timer, the
//! exchange deadline → a timer raced against the exchange that aborts it (`AbortController`)
//! and feeds [`Input::TimedOut`]. Answers to server→client requests go in their own `POST`
//! (`spawn_local`). A `401` / `403` ([`Step::Authorize`]) goes to the `auth` option's host of the
//! core's authorization machine ([`super::oauth`]), whose live token every request carries. Once
//! `notifications/initialized` is accepted, the
//! [`Listen`](crate::http::exchange::Listen) machine runs the server's `GET` stream in the
//! background (`send` returns once it is answered, within
//! [`LISTEN_ARM_TIMEOUT`](crate::http::exchange::LISTEN_ARM_TIMEOUT)); `close` aborts it and sends the session's `DELETE`.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use futures::channel::oneshot;
use futures::future::{select, Either};
use js_sys::{Function, Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, AbortSignal, Headers, Request, RequestInit, Response};

use super::oauth::BrowserAuth;
use super::Transport;
use crate::client::{ClientError, ClientTransport, SinkReply, TransportSink};
use crate::http::exchange::{self, Endpoint, Event, Input, Machine, Outgoing, Step};
use crate::wasm::{error_message, error_to_js};
use crate::wire::jsonrpc::{ErrorObject, JsonRpcBatchResponse, JsonRpcMessage};
use crate::BoxFuture;

#[wasm_bindgen]
extern "C" {
    /// The global `fetch` (window, worker or node), looked up at each call.
    #[wasm_bindgen(js_name = fetch)]
    fn global_fetch(request: &Request) -> Promise;
}

struct Shared {
    fetch: Option<Function>,
    /// The `auth` option: the sign-in and the tokens (none: a `401` is read as is).
    auth: Option<BrowserAuth>,
    endpoint: RefCell<Endpoint>,
    sink: RefCell<Option<TransportSink>>,
    /// The running `GET` listener's abort handle and generation (a new one stops the old).
    listener: RefCell<Option<AbortController>>,
    generation: Cell<u64>,
    /// Answers to the server's requests on their way (at most
    /// [`MAX_ANSWERS_IN_FLIGHT`](exchange::MAX_ANSWERS_IN_FLIGHT)).
    answering: Cell<usize>,
}

/// The fetch transport (a [`ClientTransport`]); cheap to clone.
#[derive(Clone)]
pub struct FetchTransport {
    shared: Rc<Shared>,
}

fn bad(path: &str, what: &str) -> JsValue {
    error_to_js(
        &ErrorObject::invalid_params(format!("{path} {what}"))
            .with_data(serde_json::json!({ "path": path })),
    )
}

/// Create a Streamable HTTP transport over `fetch` for `createMCPClient`.
///
/// Options: `url`, `headers` (sent with every request: a plain object, a `Headers`, or
/// `[name, value]` pairs, as `fetch` takes them), `fetch` (default `globalThis.fetch`),
/// `timeout` (ms ≥ 0: the deadline of each HTTP exchange, send to end of answer, resumes
/// included; default none — the client's own request deadline still applies), `auth` (OAuth:
/// on a `401` / `403` the transport signs in through `auth.signIn` and retries; see
/// [`super::oauth`] and `MCPClientAuthOptions`).
///
/// # Errors
/// Throws an `MCPError` (`-32602`, `data.path`) when `url` is missing or not an `http(s)://`
/// URL, a header value is not a string, `fetch` is not a function, `timeout` is not a number
/// of ms ≥ 0, or a member of `auth` is malformed.
#[wasm_bindgen(js_name = createFetchTransport)]
pub fn create_fetch_transport(
    #[wasm_bindgen(unchecked_param_type = "MCPFetchTransportOptions")] options: JsValue,
) -> Result<Transport, JsValue> {
    let url = crate::wasm::convert::member(&options, "url", "options")
        .map_err(|e| error_to_js(&e))?
        .and_then(|u| u.as_string())
        .ok_or_else(|| bad("options.url", "must be a string"))?;
    let lower = url.to_ascii_lowercase();
    if !lower.starts_with("http://") && !lower.starts_with("https://") {
        return Err(bad("options.url", "must be an http:// or https:// URL"));
    }
    let mut headers = Vec::new();
    let member = |key: &str| -> Result<JsValue, JsValue> {
        crate::wasm::convert::member(&options, key, "options")
            .map(|v| v.unwrap_or(JsValue::UNDEFINED))
            .map_err(|e| error_to_js(&e))
    };
    let given = member("headers")?;
    // Read through `Reflect` and `catch` imports: a `Proxy` whose trap throws is an `MCPError`
    // naming the option, never an exception through the module.
    let unreadable = |e: JsValue| {
        bad(
            "options.headers",
            &format!("could not be read: {}", error_message(&e)),
        )
    };
    if given.is_instance_of::<Headers>() {
        // A `Headers` object has no own keys: its pairs are what it iterates.
        headers = header_pairs(&given).map_err(unreadable)?;
    } else if crate::wasm::convert::is_array(&given).map_err(unreadable)? {
        // `[name, value]` pairs, as `fetch` takes them.
        let length = Reflect::get(&given, &"length".into())
            .map_err(unreadable)?
            .as_f64()
            .unwrap_or(0.0) as u32;
        for i in 0..length {
            let pair = Reflect::get_u32(&given, i).map_err(unreadable)?;
            let item = |at: u32| Reflect::get_u32(&pair, at).ok().and_then(|v| v.as_string());
            let is_pair = crate::wasm::convert::is_array(&pair).unwrap_or(false)
                && Reflect::get(&pair, &"length".into())
                    .ok()
                    .and_then(|l| l.as_f64())
                    == Some(2.0);
            let strings = is_pair.then(|| Some((item(0)?, item(1)?))).flatten();
            headers.push(strings.ok_or_else(|| {
                bad(
                    &format!("options.headers.{i}"),
                    "must be a [name, value] pair of strings",
                )
            })?);
        }
    } else if given.is_object() {
        for key in crate::wasm::convert::object_keys(&given)
            .map_err(unreadable)?
            .iter()
        {
            let name = key.as_string().unwrap_or_default();
            let value = crate::wasm::convert::member(&given, &name, "options.headers")
                .map_err(|e| error_to_js(&e))?
                .and_then(|v| v.as_string())
                .ok_or_else(|| bad(&format!("options.headers.{name}"), "must be a string"))?;
            headers.push((name, value));
        }
    }
    let fetch = member("fetch")?;
    let fetch = if fetch.is_undefined() || fetch.is_null() {
        None
    } else {
        Some(
            fetch
                .dyn_into::<Function>()
                .map_err(|_| bad("options.fetch", "must be a function"))?,
        )
    };
    let timeout = member("timeout")?;
    let timeout = if timeout.is_undefined() || timeout.is_null() {
        None
    } else {
        match timeout.as_f64() {
            Some(ms) if ms.is_finite() && ms >= 0.0 => {
                Some(Duration::from_micros((ms * 1e3) as u64))
            }
            _ => return Err(bad("options.timeout", "must be a number of ms ≥ 0")),
        }
    };
    let auth = BrowserAuth::from_options(&options, &url)?;
    Ok(Transport::new(
        FetchTransport {
            shared: Rc::new(Shared {
                fetch,
                auth,
                endpoint: RefCell::new(Endpoint::new(url, headers, timeout)),
                sink: RefCell::new(None),
                listener: RefCell::new(None),
                generation: Cell::new(0),
                answering: Cell::new(0),
            }),
        },
        "http",
    ))
}

/// Aborts its controller when dropped.
struct AbortOnDrop(Option<AbortController>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(controller) = &self.0 {
            controller.abort();
        }
    }
}

/// A response body's reader (`body.getReader()`) and its `read`. Dropped before the stream
/// ended (the exchange finished early, timed out or was abandoned), it cancels the stream: the
/// host closes the connection, rather than keep reading what a server may send for ever.
pub(super) struct Reader {
    reader: JsValue,
    read: Function,
    ended: Cell<bool>,
    /// Empty chunks read in a row.
    empties: Cell<u32>,
}

/// How many empty chunks in a row a [`Reader`] reads before it gives the event loop a turn.
const EMPTY_READS_PER_YIELD: u32 = 64;

impl Reader {
    pub(super) fn of(response: &Response) -> Result<Option<Reader>, JsValue> {
        let body = Reflect::get(response, &"body".into())?;
        if body.is_undefined() || body.is_null() {
            return Ok(None);
        }
        let reader = method(&body, "getReader")?.call0(&body)?;
        let read = method(&reader, "read")?;
        Ok(Some(Reader {
            reader,
            read,
            ended: Cell::new(false),
            empties: Cell::new(0),
        }))
    }

    /// The next chunk; `None` at the end. A read that gives no `{ done, value }` object, or a
    /// value that is not bytes, is an error (such a reader was read for ever); after every
    /// [`EMPTY_READS_PER_YIELD`] empty chunks in a row the host's event loop is given a turn
    /// (a reader that resolves at once with nothing, for ever, starved every timer: the
    /// request's deadline never fired).
    pub(super) async fn next(&self) -> Result<Option<Vec<u8>>, JsValue> {
        let chunk = JsFuture::from(Promise::resolve(&self.read.call0(&self.reader)?)).await?;
        if !chunk.is_object() {
            return Err(
                js_sys::TypeError::new("the body's reader gave no { done, value } object").into(),
            );
        }
        if Reflect::get(&chunk, &"done".into())?.is_truthy() {
            self.ended.set(true);
            return Ok(None);
        }
        let bytes = Reflect::get(&chunk, &"value".into())?
            .dyn_into::<Uint8Array>()
            .map_err(|_| js_sys::TypeError::new("a body chunk that is not bytes"))?
            .to_vec();
        if bytes.is_empty() {
            let empties = self.empties.get() + 1;
            self.empties.set(empties);
            if empties % EMPTY_READS_PER_YIELD == 0 {
                crate::host::defaults::delay(std::time::Duration::from_millis(1)).await;
            }
        } else {
            self.empties.set(0);
        }
        Ok(Some(bytes))
    }

    /// Done with this stream: release it (the server may keep it open).
    pub(super) fn cancel(self) {
        drop(self);
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        if self.ended.get() {
            return;
        }
        if let Ok(cancel) = method(&self.reader, "cancel") {
            if let Ok(p) = cancel.call0(&self.reader) {
                if let Ok(p) = p.dyn_into::<Promise>() {
                    crate::wasm::spawn(async move {
                        let _ = JsFuture::from(p).await;
                    });
                }
            }
        }
    }
}

fn method(target: &JsValue, name: &str) -> Result<Function, JsValue> {
    Reflect::get(target, &name.into())?.dyn_into::<Function>()
}

/// The answer's headers as name/value pairs (`Headers` is iterable as `[name, value]`), read
/// through `Reflect`: an iterator or an entry that throws is an `Err`, never an exception
/// through the module.
fn header_pairs(headers: &JsValue) -> Result<Vec<(String, String)>, JsValue> {
    let Some(entries) = js_sys::try_iter(headers)? else {
        return Ok(Vec::new());
    };
    let mut pairs = Vec::new();
    for entry in entries {
        let entry = entry?;
        let name = Reflect::get_u32(&entry, 0)?.as_string();
        let value = Reflect::get_u32(&entry, 1)?.as_string();
        if let (Some(name), Some(value)) = (name, value) {
            pairs.push((name, value));
        }
    }
    Ok(pairs)
}

/// A `Response`'s status and header fields, read through `Reflect`: a custom `fetch`'s
/// `Response` whose getter throws (or whose status is not a number) fails the exchange with
/// what it threw, never an exception through the module.
pub(super) fn response_head(response: &JsValue) -> Result<(u16, Vec<(String, String)>), JsValue> {
    let status = Reflect::get(response, &"status".into())?
        .as_f64()
        .filter(|s| s.fract() == 0.0 && (0.0..=999.0).contains(s))
        .ok_or_else(|| js_sys::TypeError::new("the Response's status is not an HTTP status"))?;
    let headers = header_pairs(&Reflect::get(response, &"headers".into())?)?;
    Ok((status as u16, headers))
}

fn transport_error(what: &str, e: &JsValue) -> ClientError {
    ClientError::Transport(format!("{what}: {}", error_message(e)))
}

impl Shared {
    fn sink(&self) -> Option<TransportSink> {
        self.sink.borrow().clone()
    }

    fn report(&self, message: String) {
        if let Some(sink) = self.sink() {
            sink.error(message);
        }
    }

    /// Act on one event: deliver a message (answering server requests in their own `POST`),
    /// report a problem, or apply a session change.
    fn act(self: &Rc<Self>, event: Event) {
        match event {
            Event::Message(value) => {
                let Some(sink) = self.sink() else { return };
                if let Some(reply) = sink.receive(value) {
                    if self.answering.get() >= exchange::MAX_ANSWERS_IN_FLIGHT {
                        self.report(exchange::answer_dropped());
                        return;
                    }
                    self.answering.set(self.answering.get() + 1);
                    let shared = self.clone();
                    crate::wasm::spawn(async move {
                        let written = match reply {
                            SinkReply::Message(message) => shared.exchange(message, None).await,
                            SinkReply::Batch(batch) => shared.exchange_batch(&batch).await,
                        };
                        shared.answering.set(shared.answering.get() - 1);
                        if let Err(e) = written {
                            shared.report(format!("could not answer the server: {e}"));
                        }
                    });
                }
            }
            Event::Problem(text) => self.report(text),
            other => {
                self.endpoint.borrow_mut().apply(&other);
            }
        }
    }

    /// The `Request` of an [`Outgoing`], with the token in hand unless it carries its own
    /// `Authorization` (a refused or expired token comes back as a `401`).
    fn request(&self, out: &Outgoing, signal: Option<&AbortSignal>) -> Result<Request, JsValue> {
        let headers = Headers::new()?;
        for (name, value) in &out.headers {
            headers.set(name, value)?;
        }
        if out.header("authorization").is_none() {
            if let Some(token) = self.auth.as_ref().and_then(BrowserAuth::current) {
                headers.set("authorization", &format!("Bearer {token}"))?;
            }
        }
        let init = RequestInit::new();
        init.set_method(out.method.as_str());
        init.set_headers(&headers);
        if let Some(signal) = signal {
            init.set_signal(Some(signal));
        }
        if !out.body.is_empty() {
            init.set_body(&JsValue::from_str(&String::from_utf8_lossy(&out.body)));
        }
        Request::new_with_str_and_init(&out.url, &init)
    }

    async fn fetch(&self, request: &Request) -> Result<Response, JsValue> {
        let promise = match &self.fetch {
            Some(fetch) => Promise::resolve(&fetch.call1(&JsValue::UNDEFINED, request)?),
            None => global_fetch(request),
        };
        JsFuture::from(promise).await?.dyn_into::<Response>()
    }

    /// Run a machine from `first` to its [`Step::Done`], acting on its events after each step;
    /// stops quietly (`Ok`) once `live()` turns false.
    async fn drive<M: Machine>(
        self: &Rc<Self>,
        machine: &mut M,
        first: Step,
        signal: Option<&AbortSignal>,
        live: impl Fn() -> bool,
        mut armed: Option<oneshot::Sender<()>>,
    ) -> Result<(), ClientError> {
        let mut step = first;
        let mut reader: Option<Reader> = None;
        // The `Request` being answered, held while its answer is read: node's `fetch` follows
        // its `signal` through the `Request`, weakly — once the object is collected, aborting
        // the controller no longer reaches the connection.
        let mut _sent: Option<Request> = None;
        let result = loop {
            while let Some(event) = machine.poll_event() {
                self.act(event);
            }
            step = match step {
                Step::Send(out) => {
                    if let Some(reader) = reader.take() {
                        reader.cancel();
                    }
                    let request = match self.request(&out, signal) {
                        Ok(request) => request,
                        Err(e) => break Err(transport_error("cannot build the request", &e)),
                    };
                    let response = self.fetch(&request).await;
                    _sent = Some(request);
                    if let Some(armed) = armed.take() {
                        let _ = armed.send(());
                    }
                    if !live() {
                        break Ok(());
                    }
                    let read = |r: Response| Ok((response_head(&r)?, Reader::of(&r)?));
                    match response.and_then(read) {
                        Ok(((status, headers), body)) => {
                            reader = body;
                            machine.handle(Input::Response {
                                status,
                                headers: &headers,
                            })
                        }
                        Err(e) => machine.handle(Input::Failed(&error_message(&e))),
                    }
                }
                Step::Read => {
                    let chunk = match &reader {
                        Some(reader) => reader.next().await,
                        None => Ok(None),
                    };
                    if !live() {
                        break Ok(());
                    }
                    match chunk {
                        Ok(Some(bytes)) => machine.handle(Input::Chunk(&bytes)),
                        Ok(None) => machine.handle(Input::End),
                        Err(e) => machine.handle(Input::Failed(&error_message(&e))),
                    }
                }
                Step::Wait(delay) => {
                    crate::host::defaults::delay(delay).await;
                    if !live() {
                        break Ok(());
                    }
                    machine.handle(Input::Waited)
                }
                // The authorization seam: a sign-in (or a refresh) when `auth` is given;
                // without a token the answer is read as is.
                Step::Authorize(challenge) => match &self.auth {
                    Some(auth) => match auth.authorize(&challenge).await {
                        Ok(token) => machine.handle(Input::Token(Some(&token))),
                        Err(e) => {
                            self.report(format!("authorization failed: {e}"));
                            machine.handle(Input::Token(None))
                        }
                    },
                    None => machine.handle(Input::Token(None)),
                },
                Step::Done(result) => break result,
            };
        };
        if let Some(reader) = reader.take() {
            reader.cancel();
        }
        result
    }

    /// One message's exchange, bounded by the endpoint's deadline (then aborted).
    async fn exchange(
        self: &Rc<Self>,
        message: JsonRpcMessage,
        modern: Option<Vec<(String, String)>>,
    ) -> Result<(), ClientError> {
        let machine = self.endpoint.borrow_mut().exchange(&message, modern);
        self.run(machine).await
    }

    /// `POST` the answers to a batch of the server's requests as one array.
    async fn exchange_batch(
        self: &Rc<Self>,
        batch: &JsonRpcBatchResponse,
    ) -> Result<(), ClientError> {
        let machine = self.endpoint.borrow_mut().exchange_batch(batch);
        self.run(machine).await
    }

    /// Run one `POST` exchange to its end (bounded by its deadline), acting on its events.
    async fn run(self: &Rc<Self>, mut machine: exchange::Exchange) -> Result<(), ClientError> {
        let machine_deadline = machine.deadline();
        let first = machine.start();
        // Aborted when this future ends or is dropped (the request timed out or was abandoned
        // by the client): its `fetch` and the response stream end with it, not when the server
        // ends them (a silent server kept every timed-out request's connection open).
        let controller = AbortController::new().ok();
        let signal = controller.as_ref().map(AbortController::signal);
        let mut run = Box::pin(self.drive(&mut machine, first, signal.as_ref(), || true, None));
        // Declared after the drive (which is only ever borrowed below): dropped before it,
        // whether this future ends or is dropped, so the abort reaches the request the drive
        // still holds.
        let controller = AbortOnDrop(controller);
        let result = match machine_deadline {
            Some(limit) => {
                let bound = Box::pin(crate::host::defaults::delay(limit));
                match select(&mut run, bound).await {
                    Either::Left((result, _)) => Some(result),
                    Either::Right(_) => {
                        drop(controller);
                        None
                    }
                }
            }
            None => Some((&mut run).await),
        };
        drop(run);
        let result = match result {
            Some(result) => result,
            None => match machine.handle(Input::TimedOut) {
                Step::Done(result) => result,
                _ => Err(ClientError::Transport("the HTTP exchange timed out".into())),
            },
        };
        while let Some(event) = machine.poll_event() {
            self.act(event);
        }
        result
    }

    fn stop_listening(&self) {
        self.generation.set(self.generation.get() + 1);
        if let Some(controller) = self.listener.borrow_mut().take() {
            controller.abort();
        }
    }

    /// Start the `GET` stream; the receiver fires once its first `GET` is answered (or failed).
    fn start_listening(self: &Rc<Self>) -> oneshot::Receiver<()> {
        self.stop_listening();
        let (armed, answered) = oneshot::channel();
        let Ok(controller) = AbortController::new() else {
            return answered;
        };
        let signal = controller.signal();
        *self.listener.borrow_mut() = Some(controller);
        let shared = self.clone();
        let generation = self.generation.get();
        crate::wasm::spawn(async move {
            let mut machine = shared.endpoint.borrow().listen();
            let first = machine.start();
            let live = || shared.generation.get() == generation;
            let _ = shared
                .drive(&mut machine, first, Some(&signal), live, Some(armed))
                .await;
            if shared.generation.get() == generation {
                while let Some(event) = machine.poll_event() {
                    shared.act(event);
                }
            }
        });
        answered
    }
}

impl ClientTransport for FetchTransport {
    fn start(&self, sink: TransportSink) -> BoxFuture<'_, Result<(), ClientError>> {
        *self.shared.sink.borrow_mut() = Some(sink);
        Box::pin(async { Ok(()) })
    }

    fn send(&self, message: JsonRpcMessage) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(async move {
            let initialized = matches!(&message, JsonRpcMessage::Notification(n) if n.method == "notifications/initialized");
            self.shared.exchange(message, None).await?;
            if initialized {
                // The GET stream is open (or refused) before the client's next request.
                let answered = self.shared.start_listening();
                let bound = futures_timer::Delay::new(exchange::LISTEN_ARM_TIMEOUT);
                let _ = select(answered, bound).await;
            }
            Ok(())
        })
    }

    fn send_modern(
        &self,
        message: JsonRpcMessage,
        headers: Vec<(String, String)>,
    ) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(async move { self.shared.exchange(message, Some(headers)).await })
    }

    /// One `POST` whose body is the batch's array.
    fn send_batch(&self, batch: JsonRpcBatchResponse) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(async move { self.shared.exchange_batch(&batch).await })
    }

    fn uses_headers(&self) -> bool {
        true
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.shared.stop_listening();
            self.shared.sink.borrow_mut().take();
            let Some(delete) = self.shared.endpoint.borrow_mut().close() else {
                return;
            };
            // End the session (best effort; a server without DELETE answers 405).
            if let Ok(request) = self.shared.request(&delete, None) {
                let delete = Box::pin(self.shared.fetch(&request));
                let _ = select(delete, futures_timer::Delay::new(exchange::CLOSE_TIMEOUT)).await;
            }
        })
    }

    fn set_protocol_version(&self, version: &str) {
        self.shared
            .endpoint
            .borrow_mut()
            .set_protocol_version(version);
    }

    fn session_id(&self) -> Option<String> {
        self.shared
            .endpoint
            .borrow()
            .session_id()
            .map(str::to_owned)
    }
}

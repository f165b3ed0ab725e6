//! The Streamable HTTP client transport (seed `createHTTPClientTransport`, clause 15; spec
//! [Streamable HTTP](https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http)),
//! over hyper's client: a thin driver of the core's [`crate::http::exchange`] machine, which
//! decides every header and reads every answer (its module docs hold the table).
//!
//! This file only turns the machine's [`Step`]s into hyper I/O and tokio timers, and the
//! answers back into [`Input`]s: `Send` → `client.request`, `Read` → the next body frame, `Wait`
//! → `tokio::time::sleep`, the exchange deadline → `tokio::time::timeout` feeding
//! [`Input::TimedOut`]. Answers to server→client requests go in their own `POST`, on a tokio
//! task. Once `notifications/initialized` is accepted, a background task drives the
//! [`Listen`](crate::http::exchange::Listen) machine (the server's `GET` stream; `send` returns
//! once it is answered, within [`LISTEN_ARM_TIMEOUT`](crate::http::exchange::LISTEN_ARM_TIMEOUT));
//! `close` stops it, lets the answers already on their way finish, then sends the session's
//! `DELETE` (each bounded by [`CLOSE_TIMEOUT`](crate::http::exchange::CLOSE_TIMEOUT)).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Request, Uri};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use tokio::sync::oneshot;

use crate::client::SinkReply;
use crate::client::{ClientError, ClientTransport, TransportSink};
use crate::http::exchange::{self, Authorizer, Endpoint, Event, Input, Machine, Outgoing, Step};
use crate::wire::jsonrpc::{JsonRpcBatchResponse, JsonRpcMessage};
use crate::BoxFuture;

pub use crate::http::exchange::{
    DEFAULT_RECONNECT_MS, MAX_IDLE_RECONNECTS, MAX_REPLY_BYTES, MAX_RESUMES, MAX_RESUME_WAIT_MS,
};

/// Options for [`HttpTransport::new`] (seed `HTTPClientTransportOptions`).
#[derive(Clone, Debug)]
pub struct HttpClientOptions {
    /// The endpoint, e.g. `http://127.0.0.1:3000/mcp`.
    pub url: String,
    /// Extra headers sent with every request (e.g. `Authorization`).
    pub headers: Vec<(String, String)>,
    /// A deadline for each HTTP exchange (connect to end of reply); `None` for none (the
    /// client's own request deadline still applies).
    pub timeout: Option<Duration>,
}

impl HttpClientOptions {
    /// Options for `url` with no extra headers and no HTTP timeout.
    pub fn new(url: impl Into<String>) -> Self {
        HttpClientOptions {
            url: url.into(),
            headers: Vec::new(),
            timeout: None,
        }
    }

    /// Add a header sent with every request.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Set the per-exchange deadline.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
}

#[cfg(feature = "tls")]
type Connector = hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>;
#[cfg(not(feature = "tls"))]
type Connector = hyper_util::client::legacy::connect::HttpConnector;

type HttpClient = Client<Connector, Full<Bytes>>;

struct Shared {
    /// The endpoint's URL, parsed; `url` as the caller gave it.
    uri: Uri,
    url: String,
    client: HttpClient,
    endpoint: Mutex<Endpoint>,
    authorizer: Mutex<Option<Arc<dyn Authorizer>>>,
    /// The caller gave an `Authorization` header of its own (the authorizer's then stays out).
    caller_authorization: bool,
    sink: Mutex<Option<TransportSink>>,
    listener: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// The `POST`s carrying the transport's own answers to server messages (a `ping`'s result,
    /// an error): `close` waits for them, at most `CLOSE_TIMEOUT`, before its `DELETE`.
    replies: Mutex<tokio::task::JoinSet<()>>,
}

/// A Streamable HTTP [`ClientTransport`] (seed `HTTPClientTransport`). Cheap to share.
#[derive(Clone)]
pub struct HttpTransport {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for HttpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpTransport")
            .field("uri", &self.shared.uri)
            .field("session", &lock(&self.shared.endpoint).session_id())
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One answer of [`fetch_bounded`]: its status, headers and (bounded) body.
pub(crate) struct Fetched {
    pub(crate) status: hyper::StatusCode,
    pub(crate) headers: hyper::HeaderMap,
    pub(crate) body: Bytes,
}

/// Why [`fetch_bounded`] has no answer to give.
#[derive(Debug)]
pub(crate) enum FetchError {
    /// No answer came: the connection failed (the error chain's text).
    Connection(String),
    /// The answer's body could not be read, or is longer than the limit.
    Body(String),
    /// Nothing complete within the timeout.
    Timeout(Duration),
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchError::Connection(text) => f.write_str(text),
            FetchError::Body(text) => write!(f, "reading the answer: {text}"),
            FetchError::Timeout(after) => write!(f, "no answer within {after:?}"),
        }
    }
}

/// Send `request` once, on a connection of its own (no pool, redirects not followed), and read
/// at most `limit` bytes of its answer's body, all within `timeout`: the one fetch of the
/// authorization code (the resource server's verifier and the OAuth client).
pub(crate) async fn fetch_bounded(
    request: Request<Full<Bytes>>,
    limit: usize,
    timeout: Duration,
) -> Result<Fetched, FetchError> {
    let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(0)
        .build(connector());
    let fetched = async {
        let response = client
            .request(request)
            .await
            .map_err(|e| FetchError::Connection(super::error_chain(&e)))?;
        let (head, body) = response.into_parts();
        let body = http_body_util::Limited::new(body, limit)
            .collect()
            .await
            .map_err(|e| FetchError::Body(e.to_string()))?
            .to_bytes();
        Ok(Fetched {
            status: head.status,
            headers: head.headers,
            body,
        })
    };
    tokio::time::timeout(timeout, fetched)
        .await
        .map_err(|_| FetchError::Timeout(timeout))?
}

pub(crate) fn connector() -> Connector {
    #[cfg(feature = "tls")]
    {
        hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(super::tls::client_config())
            .https_or_http()
            .enable_http1()
            .build()
    }
    #[cfg(not(feature = "tls"))]
    {
        hyper_util::client::legacy::connect::HttpConnector::new()
    }
}

impl HttpTransport {
    /// A transport for `options.url`.
    ///
    /// # Errors
    /// [`ClientError::InvalidArguments`] for a URL that does not parse, a scheme other than
    /// `http`/`https` (`https` needs the `tls` feature), or a header that is not valid HTTP.
    pub fn new(options: HttpClientOptions) -> Result<Self, ClientError> {
        let bad = |what: String| ClientError::InvalidArguments(what);
        let uri: Uri = options
            .url
            .parse()
            .map_err(|e| bad(format!("bad URL {:?}: {e}", options.url)))?;
        match uri.scheme_str() {
            Some("http") => {}
            Some("https") if cfg!(feature = "tls") => {}
            Some("https") => {
                return Err(bad(
                    "https:// needs orkestrel-mcp built with the `tls` feature".into(),
                ))
            }
            _ => return Err(bad(format!("{:?} is not an http(s):// URL", options.url))),
        }
        for (name, value) in &options.headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| bad(format!("bad header name {name:?}: {e}")))?;
            HeaderValue::from_str(value)
                .map_err(|e| bad(format!("bad value for header {name}: {e}")))?;
        }
        // Bounded response heads (see `native::http::MAX_HEAD_BYTES`).
        let client = Client::builder(TokioExecutor::new())
            .http1_max_buf_size(crate::native::http::MAX_HEAD_BYTES)
            .http1_max_headers(crate::native::http::MAX_HEADERS)
            .build(connector());
        let caller_authorization = options
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("authorization"));
        let url = options.url.clone();
        let endpoint = Endpoint::new(options.url, options.headers, options.timeout);
        Ok(HttpTransport {
            shared: Arc::new(Shared {
                uri,
                url,
                client,
                endpoint: Mutex::new(endpoint),
                authorizer: Mutex::new(None),
                caller_authorization,
                sink: Mutex::new(None),
                listener: Mutex::new(None),
                replies: Mutex::new(tokio::task::JoinSet::new()),
            }),
        })
    }
}

impl HttpTransport {
    /// Consult `authorizer` when the server answers `401` / `403`: its token is sent as
    /// `Authorization: Bearer <token>` on one retry of the request (the seam an OAuth client
    /// plugs into; see [`Authorizer`]). Without one, such an answer is read like any status.
    pub fn set_authorizer(&self, authorizer: Arc<dyn Authorizer>) {
        *lock(&self.shared.authorizer) = Some(authorizer);
    }
}

/// An answer's headers as the core reads them (a value that is not visible ASCII read lossily).
fn header_pairs(headers: &hyper::HeaderMap) -> Vec<(String, String)> {
    // Values that are not visible ASCII are kept (lossily), not dropped: the core judges them
    // (a session id with such bytes is refused; dropped, later requests went without one).
    headers
        .iter()
        .map(|(n, v)| {
            let value = String::from_utf8_lossy(v.as_bytes()).into_owned();
            (n.as_str().to_owned(), value)
        })
        .collect()
}

/// The hyper request of an [`Outgoing`] (headers appended in order).
fn to_hyper(uri: &Uri, out: Outgoing) -> Result<Request<Full<Bytes>>, ClientError> {
    let mut builder = Request::builder()
        .method(out.method.as_str())
        .uri(uri.clone());
    for (name, value) in &out.headers {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| ClientError::Transport(format!("bad header name {name:?}: {e}")))?;
        let value = HeaderValue::from_str(value)
            .map_err(|e| ClientError::Transport(format!("bad value for header {name}: {e}")))?;
        builder = builder.header(name, value);
    }
    builder
        .body(Full::new(Bytes::from(out.body)))
        .map_err(|e| ClientError::Transport(format!("cannot build the HTTP request: {e}")))
}

impl Shared {
    fn sink(&self) -> Option<TransportSink> {
        lock(&self.sink).clone()
    }

    fn report(&self, message: String) {
        if let Some(sink) = self.sink() {
            sink.error(message);
        }
    }

    /// Act on one event: deliver a message (answering server requests in their own `POST`),
    /// report a problem, or apply a session change.
    fn act(self: &Arc<Self>, event: Event) {
        match event {
            Event::Message(value) => {
                let Some(sink) = self.sink() else { return };
                let mut replies = lock(&self.replies);
                while replies.try_join_next().is_some() {}
                if let Some(reply) = sink.receive(value) {
                    if replies.len() >= exchange::MAX_ANSWERS_IN_FLIGHT {
                        drop(replies);
                        self.report(exchange::answer_dropped());
                        return;
                    }
                    let shared = self.clone();
                    replies.spawn(async move {
                        let written = match reply {
                            SinkReply::Message(message) => shared.exchange(message, None).await,
                            SinkReply::Batch(batch) => shared.exchange_batch(&batch).await,
                        };
                        if let Err(e) = written {
                            shared.report(format!("could not answer the server: {e}"));
                        }
                    });
                }
            }
            Event::Problem(text) => self.report(text),
            other => {
                lock(&self.endpoint).apply(&other);
            }
        }
    }

    /// Run a machine from `first` to its [`Step::Done`], acting on its events after each step.
    async fn drive<M: Machine>(
        self: &Arc<Self>,
        machine: &mut M,
        first: Step,
        mut armed: Option<oneshot::Sender<()>>,
    ) -> Result<(), ClientError> {
        let mut step = first;
        let mut body: Option<Incoming> = None;
        loop {
            while let Some(event) = machine.poll_event() {
                self.act(event);
            }
            step = match step {
                Step::Send(mut out) => {
                    body = None;
                    // The endpoint's URL, or where the machine followed a redirect to.
                    let uri = if out.url == self.url {
                        self.uri.clone()
                    } else {
                        out.url.parse::<Uri>().map_err(|e| {
                            ClientError::Transport(format!("bad redirect URL {:?}: {e}", out.url))
                        })?
                    };
                    self.authorize(&mut out, &uri).await;
                    let request = to_hyper(&uri, out)?;
                    let response = self.client.request(request).await;
                    if let Some(armed) = armed.take() {
                        let _ = armed.send(());
                    }
                    match response {
                        Ok(response) => {
                            let (parts, incoming) = response.into_parts();
                            body = Some(incoming);
                            let headers = header_pairs(&parts.headers);
                            machine.handle(Input::Response {
                                status: parts.status.as_u16(),
                                headers: &headers,
                            })
                        }
                        Err(e) => match super::refused_addr(&uri.to_string(), &e) {
                            Some(addr) => machine.handle(Input::Refused(&addr)),
                            None => machine.handle(Input::Failed(&super::error_chain(&e))),
                        },
                    }
                }
                Step::Read => match body.as_mut() {
                    None => machine.handle(Input::End),
                    Some(incoming) => match incoming.frame().await {
                        None => machine.handle(Input::End),
                        Some(Err(e)) => machine.handle(Input::Failed(&e.to_string())),
                        Some(Ok(frame)) => match frame.into_data() {
                            Ok(chunk) => machine.handle(Input::Chunk(&chunk)),
                            Err(_) => Step::Read, // trailers
                        },
                    },
                },
                Step::Wait(delay) => {
                    body = None;
                    tokio::time::sleep(delay).await;
                    machine.handle(Input::Waited)
                }
                // The authorization seam: a 401 / 403 asks the authorizer (if any) for a token.
                Step::Authorize(challenge) => {
                    let authorizer = lock(&self.authorizer).clone();
                    let token = match authorizer {
                        Some(authorizer) => authorizer.authorize(&challenge).await,
                        None => None,
                    };
                    machine.handle(Input::Token(token.as_deref()))
                }
                Step::Done(result) => return result,
            };
        }
    }

    /// A token obtained earlier goes with every request, the session's `DELETE` too (a
    /// refused or expired one comes back as a 401, and the authorizer is asked again), with a
    /// fresh DPoP proof where the token is bound; the caller's own `Authorization` header wins.
    async fn authorize(&self, out: &mut Outgoing, uri: &Uri) {
        let authorizer = lock(&self.authorizer).clone();
        if let (Some(authorizer), false) = (authorizer, self.caller_authorization) {
            authorizer.prepare().await;
            let method = out.method.as_str();
            for (name, value) in authorizer.request_headers(method, &uri.to_string()) {
                out.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(&name));
                out.headers.push((name, value));
            }
        }
    }

    /// One message's exchange, bounded by the endpoint's deadline.
    async fn exchange(
        self: &Arc<Self>,
        message: JsonRpcMessage,
        modern: Option<Vec<(String, String)>>,
    ) -> Result<(), ClientError> {
        let machine = lock(&self.endpoint).exchange(&message, modern);
        self.run(machine).await
    }

    /// `POST` the answers to a batch of the server's requests as one array.
    async fn exchange_batch(
        self: &Arc<Self>,
        batch: &JsonRpcBatchResponse,
    ) -> Result<(), ClientError> {
        let machine = lock(&self.endpoint).exchange_batch(batch);
        self.run(machine).await
    }

    /// Run one `POST` exchange to its end (bounded by its deadline), acting on its events.
    async fn run(self: &Arc<Self>, mut machine: exchange::Exchange) -> Result<(), ClientError> {
        let first = machine.start();
        let result = match machine.deadline() {
            Some(limit) => {
                let run = self.drive(&mut machine, first, None);
                tokio::time::timeout(limit, run).await.ok()
            }
            None => Some(self.drive(&mut machine, first, None).await),
        };
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
        if let Some(task) = lock(&self.listener).take() {
            task.abort();
        }
    }

    /// The server's `GET` stream, until the machine stops or the transport closes.
    /// `armed` fires once its first `GET` is answered (or failed).
    async fn listen(self: Arc<Self>, armed: oneshot::Sender<()>) {
        let mut machine = lock(&self.endpoint).listen();
        let first = machine.start();
        let _ = self.drive(&mut machine, first, Some(armed)).await;
        while let Some(event) = machine.poll_event() {
            self.act(event);
        }
    }
}

impl ClientTransport for HttpTransport {
    fn start(&self, sink: TransportSink) -> BoxFuture<'_, Result<(), ClientError>> {
        *lock(&self.shared.sink) = Some(sink);
        Box::pin(async { Ok(()) })
    }

    fn send(&self, message: JsonRpcMessage) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(async move {
            if lock(&self.shared.sink).is_none() {
                return Err(ClientError::closed("the HTTP transport is closed"));
            }
            let initialized = matches!(&message, JsonRpcMessage::Notification(n) if n.method == "notifications/initialized");
            self.shared.exchange(message, None).await?;
            if initialized {
                self.shared.stop_listening();
                let (armed, answered) = oneshot::channel();
                let task = tokio::spawn(self.shared.clone().listen(armed));
                *lock(&self.shared.listener) = Some(task);
                // The GET stream is open (or refused) before the client's next request.
                let _ = tokio::time::timeout(exchange::LISTEN_ARM_TIMEOUT, answered).await;
            }
            Ok(())
        })
    }

    /// One `POST` whose body is the batch's array.
    fn send_batch(&self, batch: JsonRpcBatchResponse) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(async move {
            if lock(&self.shared.sink).is_none() {
                return Err(ClientError::closed("the HTTP transport is closed"));
            }
            self.shared.exchange_batch(&batch).await
        })
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.shared.stop_listening();
            // Answers already on their way go out before the session ends (bounded).
            let mut replies = std::mem::take(&mut *lock(&self.shared.replies));
            let written = async { while replies.join_next().await.is_some() {} };
            if tokio::time::timeout(exchange::CLOSE_TIMEOUT, written)
                .await
                .is_err()
            {
                tracing::debug!("http client: answers to the server still unsent at close");
            }
            lock(&self.shared.sink).take();
            let Some(delete) = lock(&self.shared.endpoint).close() else {
                return;
            };
            // One bound for the DELETE and the redirects it follows (`Outgoing::redirected`).
            let ended = async {
                let mut delete = delete;
                for _ in 0..=exchange::MAX_REDIRECTS {
                    let Ok(uri) = delete.url.parse::<Uri>() else {
                        return;
                    };
                    let mut out = delete.clone();
                    self.shared.authorize(&mut out, &uri).await;
                    let Ok(request) = to_hyper(&uri, out) else {
                        return;
                    };
                    match self.shared.client.request(request).await {
                        Ok(answer) => {
                            let status = answer.status().as_u16();
                            let headers = header_pairs(answer.headers());
                            match delete.redirected(status, &headers) {
                                Some(next) => delete = next,
                                None => {
                                    tracing::debug!(status, "http client: session ended");
                                    return;
                                }
                            }
                        }
                        Err(e) => {
                            tracing::debug!(error = %e, "http client: DELETE failed");
                            return;
                        }
                    }
                }
                tracing::debug!("http client: DELETE redirected too many times");
            };
            if tokio::time::timeout(exchange::CLOSE_TIMEOUT, ended)
                .await
                .is_err()
            {
                tracing::debug!("http client: DELETE timed out");
            }
        })
    }

    fn send_modern(
        &self,
        message: JsonRpcMessage,
        headers: Vec<(String, String)>,
    ) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(async move {
            if lock(&self.shared.sink).is_none() {
                return Err(ClientError::closed("the HTTP transport is closed"));
            }
            self.shared.exchange(message, Some(headers)).await
        })
    }

    fn uses_headers(&self) -> bool {
        true
    }

    fn set_protocol_version(&self, version: &str) {
        lock(&self.shared.endpoint).set_protocol_version(version);
    }

    fn session_id(&self) -> Option<String> {
        lock(&self.shared.endpoint).session_id().map(str::to_owned)
    }
}

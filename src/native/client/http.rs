//! The Streamable HTTP client transport (seed `createHTTPClientTransport`, clause 15; spec
//! 2025-06-18 / 2025-11-25 `basic/transports`, Streamable HTTP), over hyper's client.
//!
//! Each message is one `POST` to the URL with `Content-Type: application/json` and
//! `Accept: application/json, text/event-stream`, plus the configured extra headers:
//!
//! | reply | outcome |
//! |---|---|
//! | `202` | nothing (a notification or response was accepted) |
//! | `200`, `application/json` | the body's message(s) go to the client |
//! | `200`, `text/event-stream` | decoded with the core [`crate::sse::Decoder`]; each event's data goes to the client; reading stops at the response to the request |
//! | `404` to a request that carried `mcp-session-id` | [`ClientError::SessionExpired`] |
//! | other status | a JSON-RPC response in the body answering the request is delivered; otherwise [`ClientError::Transport`] with the status and message |
//! | connection failure, per-request timeout | [`ClientError::Transport`] for that request only |
//!
//! Sessions: the `mcp-session-id` of the `initialize` reply is captured and sent on every later
//! request; `MCP-Protocol-Version` carries the negotiated version after `initialize`; `close`
//! ends a session with `DELETE` (best effort). Server→client requests arriving in a reply are
//! answered with a separate `POST`.
//!
//! The server's own stream: once `notifications/initialized` is accepted, a background `GET`
//! (`Accept: text/event-stream`) listens for messages the server sends outside any request
//! (e.g. `notifications/tools/list_changed`). A `405` means the server offers none (quietly
//! dropped); when the stream ends it is resumed with `Last-Event-ID` after the server's `retry`
//! (default [`DEFAULT_RECONNECT_MS`]); after [`MAX_IDLE_RECONNECTS`] reconnections that bring
//! nothing, or any other failure, it stops and reports an `error` event. `close` stops it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::{Method, Request, Response, StatusCode, Uri};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

use crate::client::{ClientError, ClientTransport, TransportSink};
use crate::jsonrpc::{JsonRpcMessage, RequestId};
use crate::native::http::{MCP_PROTOCOL_VERSION_HEADER, MCP_SESSION_HEADER};
use crate::sse;
use crate::BoxFuture;

/// How long to wait before resuming the server's `GET` stream when it sent no `retry`: 1 000 ms.
pub const DEFAULT_RECONNECT_MS: u64 = 1_000;

/// How many times in a row the `GET` stream is resumed without receiving any event before the
/// transport gives up on it.
pub const MAX_IDLE_RECONNECTS: u32 = 5;

/// The longest a request's interrupted SSE stream is resumed for (summed `retry` waits) before
/// the request fails: 60 000 ms.
pub const MAX_RESUME_WAIT_MS: u64 = 60_000;

/// The most times one request's interrupted SSE stream is resumed.
pub const MAX_RESUMES: u32 = 20;

/// The largest non-SSE reply body read: 16 MiB.
pub const MAX_REPLY_BYTES: usize = 16 * 1024 * 1024;

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
    uri: Uri,
    headers: HeaderMap,
    timeout: Option<Duration>,
    client: HttpClient,
    session: Mutex<Option<String>>,
    version: Mutex<Option<String>>,
    sink: Mutex<Option<TransportSink>>,
    listener: Mutex<Option<tokio::task::JoinHandle<()>>>,
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
            .field("session", &*lock(&self.shared.session))
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn connector() -> Connector {
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
        let mut headers = HeaderMap::new();
        for (name, value) in &options.headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| bad(format!("bad header name {name:?}: {e}")))?;
            let value = HeaderValue::from_str(value)
                .map_err(|e| bad(format!("bad value for header {name}: {e}")))?;
            headers.append(name, value);
        }
        let client = Client::builder(TokioExecutor::new()).build(connector());
        Ok(HttpTransport {
            shared: Arc::new(Shared {
                uri,
                headers,
                timeout: options.timeout,
                client,
                session: Mutex::new(None),
                version: Mutex::new(None),
                sink: Mutex::new(None),
                listener: Mutex::new(None),
            }),
        })
    }
}

/// Whether `value` (a message or a batch) holds a response to `id`.
fn answers(value: &Value, id: &RequestId) -> bool {
    match value {
        Value::Array(items) => items.iter().any(|v| answers(v, id)),
        Value::Object(map) => {
            !map.contains_key("method")
                && map.get("id").and_then(RequestId::from_value).as_ref() == Some(id)
        }
        _ => false,
    }
}

fn error_summary(status: StatusCode, body: &[u8]) -> String {
    let detail = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| {
            v.pointer("/error/message")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| {
            let text = String::from_utf8_lossy(&body[..body.len().min(300)]);
            text.trim().to_owned()
        });
    if detail.is_empty() {
        format!("HTTP {status}")
    } else {
        format!("HTTP {status}: {detail}")
    }
}

impl Shared {
    fn deliver(self: &Arc<Self>, value: Value) {
        let Some(sink) = lock(&self.sink).clone() else {
            return;
        };
        for reply in sink.receive(value) {
            // Answers to server requests go back in their own POST, off this task.
            let shared = self.clone();
            tokio::spawn(async move {
                if let Err(e) = shared.exchange(reply).await {
                    if let Some(sink) = lock(&shared.sink).clone() {
                        sink.error(format!("could not answer the server: {e}"));
                    }
                }
            });
        }
    }

    fn build(
        &self,
        message: &JsonRpcMessage,
        body: String,
        modern: Option<&[(String, String)]>,
    ) -> Result<(Request<Full<Bytes>>, Option<String>), ClientError> {
        let initialize = matches!(message, JsonRpcMessage::Request(r) if r.method == "initialize");
        if initialize {
            // A new handshake starts a new session.
            lock(&self.session).take();
            lock(&self.version).take();
        }
        // The 2026-07-28 wire has no sessions; its headers come with the request.
        let (session, version) = match modern {
            Some(_) => (None, None),
            None => (lock(&self.session).clone(), lock(&self.version).clone()),
        };
        let mut builder = Request::builder()
            .method(Method::POST)
            .uri(self.uri.clone())
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json, text/event-stream");
        for (name, value) in &self.headers {
            builder = builder.header(name, value);
        }
        if let Some(session) = &session {
            builder = builder.header(MCP_SESSION_HEADER, session);
        }
        if let Some(version) = &version {
            builder = builder.header(MCP_PROTOCOL_VERSION_HEADER, version);
        }
        for (name, value) in modern.unwrap_or_default() {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| ClientError::Transport(format!("bad header name {name:?}: {e}")))?;
            let value = HeaderValue::from_str(value)
                .map_err(|e| ClientError::Transport(format!("bad value for header {name}: {e}")))?;
            builder = builder.header(name, value);
        }
        let request = builder
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| ClientError::Transport(format!("cannot build the HTTP request: {e}")))?;
        Ok((request, session))
    }

    async fn exchange(self: &Arc<Self>, message: JsonRpcMessage) -> Result<(), ClientError> {
        self.exchange_with(message, None).await
    }

    async fn exchange_with(
        self: &Arc<Self>,
        message: JsonRpcMessage,
        modern: Option<Vec<(String, String)>>,
    ) -> Result<(), ClientError> {
        let work = self.exchange_inner(message, modern);
        match self.timeout {
            Some(limit) => tokio::time::timeout(limit, work).await.map_err(|_| {
                ClientError::Transport(format!(
                    "the HTTP exchange timed out after {} ms",
                    limit.as_millis()
                ))
            })?,
            None => work.await,
        }
    }

    async fn exchange_inner(
        self: &Arc<Self>,
        message: JsonRpcMessage,
        modern: Option<Vec<(String, String)>>,
    ) -> Result<(), ClientError> {
        let request_id = match &message {
            JsonRpcMessage::Request(r) => Some(r.id.clone()),
            _ => None,
        };
        let initialize = matches!(&message, JsonRpcMessage::Request(r) if r.method == "initialize");
        let (request, carried_session) =
            self.build(&message, message.to_json(), modern.as_deref())?;
        let response = self
            .client
            .request(request)
            .await
            .map_err(|e| ClientError::Transport(format!("POST {} failed: {e}", self.uri)))?;
        let status = response.status();
        if initialize && status.is_success() {
            if let Some(id) = response
                .headers()
                .get(MCP_SESSION_HEADER)
                .and_then(|v| v.to_str().ok())
            {
                *lock(&self.session) = Some(id.to_owned());
            }
        }
        if status == StatusCode::ACCEPTED {
            return Ok(());
        }
        if modern.is_some() && !status.is_success() {
            let body = http_body_util::Limited::new(response.into_body(), MAX_REPLY_BYTES)
                .collect()
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            let error = serde_json::from_slice::<Value>(&body)
                .ok()
                .and_then(|v| v.get("error").cloned())
                .and_then(|e| serde_json::from_value::<crate::jsonrpc::ErrorObject>(e).ok());
            let detail = error_summary(status, &body);
            return Err(ClientError::HttpStatus {
                status: status.as_u16(),
                error,
                detail,
            });
        }
        if status == StatusCode::NOT_FOUND {
            if let Some(session) = carried_session {
                lock(&self.session).take();
                return Err(ClientError::SessionExpired { session });
            }
        }
        let is_sse = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|m| m.trim().eq_ignore_ascii_case("text/event-stream"));
        if is_sse && status.is_success() {
            return self.read_stream(response, request_id).await;
        }
        let body = http_body_util::Limited::new(response.into_body(), MAX_REPLY_BYTES)
            .collect()
            .await
            .map_err(|e| ClientError::Transport(format!("reading the HTTP reply failed: {e}")))?
            .to_bytes();
        let value = serde_json::from_slice::<Value>(&body).ok();
        let answered = match (&value, &request_id) {
            (Some(v), Some(id)) => answers(v, id),
            _ => false,
        };
        if status.is_success() || answered {
            match value {
                Some(value) => {
                    self.deliver(value);
                    if !answered && request_id.is_some() {
                        return Err(ClientError::Transport(format!(
                            "HTTP {status}: the reply does not answer the request"
                        )));
                    }
                    Ok(())
                }
                None if body.is_empty() && request_id.is_none() => Ok(()),
                None => Err(ClientError::Transport(format!(
                    "HTTP {status}: the reply is not JSON: {}",
                    String::from_utf8_lossy(&body[..body.len().min(300)])
                ))),
            }
        } else {
            Err(ClientError::Transport(error_summary(status, &body)))
        }
    }

    /// Read a request's SSE reply; when it ends (or breaks) before the response after an event
    /// id was seen, resume it with `GET` + `Last-Event-ID` after the server's `retry` (SEP-1699),
    /// within [`MAX_RESUMES`] attempts and [`MAX_RESUME_WAIT_MS`] of waiting in all.
    async fn read_stream(
        self: &Arc<Self>,
        response: Response<hyper::body::Incoming>,
        request_id: Option<RequestId>,
    ) -> Result<(), ClientError> {
        let mut decoder = sse::Decoder::new();
        let mut outcome = self.read_events(response, &request_id, &mut decoder).await;
        let (Some(id), mut waited, mut resumes) = (request_id.clone(), 0u64, 0u32) else {
            return outcome.map(drop);
        };
        while !matches!(outcome, Ok(true)) {
            let Some(last) = decoder.last_event_id().map(str::to_owned) else {
                break;
            };
            let wait = decoder.retry().unwrap_or(DEFAULT_RECONNECT_MS);
            if resumes >= MAX_RESUMES || waited.saturating_add(wait) > MAX_RESUME_WAIT_MS {
                break;
            }
            resumes += 1;
            waited += wait;
            tokio::time::sleep(Duration::from_millis(wait)).await;
            tracing::debug!(%last, "http client: resuming the request's SSE stream");
            let response = match self.resume(&last).await {
                Ok(response) => response,
                Err(e) => {
                    outcome = Err(e);
                    continue;
                }
            };
            outcome = self.read_events(response, &request_id, &mut decoder).await;
        }
        match outcome {
            Ok(true) => Ok(()),
            Ok(false) => Err(ClientError::Transport(format!(
                "the SSE stream ended without a response to request {id}"
            ))),
            Err(e) => Err(e),
        }
    }

    /// `GET` the stream again from `last_event_id`.
    async fn resume(
        self: &Arc<Self>,
        last_event_id: &str,
    ) -> Result<Response<hyper::body::Incoming>, ClientError> {
        let mut builder = Request::builder()
            .method(Method::GET)
            .uri(self.uri.clone())
            .header(header::ACCEPT, "text/event-stream")
            .header("last-event-id", last_event_id);
        for (name, value) in &self.headers {
            builder = builder.header(name, value);
        }
        if let Some(session) = lock(&self.session).clone() {
            builder = builder.header(MCP_SESSION_HEADER, session);
        }
        if let Some(version) = lock(&self.version).clone() {
            builder = builder.header(MCP_PROTOCOL_VERSION_HEADER, version);
        }
        let request = builder
            .body(Full::new(Bytes::new()))
            .map_err(|e| ClientError::Transport(format!("cannot build the GET request: {e}")))?;
        let response = self
            .client
            .request(request)
            .await
            .map_err(|e| ClientError::Transport(format!("resuming with GET failed: {e}")))?;
        if !response.status().is_success() {
            return Err(ClientError::Transport(format!(
                "resuming with GET answered HTTP {}",
                response.status()
            )));
        }
        Ok(response)
    }

    /// Deliver one SSE body's events; `Ok(true)` once the response to `request_id` arrived.
    async fn read_events(
        self: &Arc<Self>,
        response: Response<hyper::body::Incoming>,
        request_id: &Option<RequestId>,
        decoder: &mut sse::Decoder,
    ) -> Result<bool, ClientError> {
        let mut body = response.into_body();
        while let Some(frame) = body.frame().await {
            let frame =
                frame.map_err(|e| ClientError::Transport(format!("the SSE stream failed: {e}")))?;
            let Ok(chunk) = frame.into_data() else {
                continue;
            };
            for event in decoder.push(&chunk) {
                if event.data.is_empty() {
                    continue;
                }
                let value = match serde_json::from_str::<Value>(&event.data) {
                    Ok(value) => value,
                    Err(e) => {
                        if let Some(sink) = lock(&self.sink).clone() {
                            sink.error(format!("skipped an SSE event that is not JSON: {e}"));
                        }
                        continue;
                    }
                };
                let done = request_id.as_ref().is_some_and(|id| answers(&value, id));
                self.deliver(value);
                if done {
                    return Ok(true);
                }
            }
        }
        decoder.finish();
        Ok(request_id.is_none())
    }
}

impl Shared {
    fn report(&self, message: String) {
        if let Some(sink) = lock(&self.sink).clone() {
            sink.error(message);
        }
    }

    fn stop_listening(&self) {
        if let Some(task) = lock(&self.listener).take() {
            task.abort();
        }
    }

    /// The server's `GET` stream, resumed until it fails, goes idle, or the transport closes.
    async fn listen(self: Arc<Self>) {
        let mut decoder = sse::Decoder::new();
        let mut idle = 0;
        loop {
            let mut builder = Request::builder()
                .method(Method::GET)
                .uri(self.uri.clone())
                .header(header::ACCEPT, "text/event-stream");
            for (name, value) in &self.headers {
                builder = builder.header(name, value);
            }
            if let Some(session) = lock(&self.session).clone() {
                builder = builder.header(MCP_SESSION_HEADER, session);
            }
            if let Some(version) = lock(&self.version).clone() {
                builder = builder.header(MCP_PROTOCOL_VERSION_HEADER, version);
            }
            if let Some(id) = decoder.last_event_id() {
                builder = builder.header("last-event-id", id);
            }
            let Ok(request) = builder.body(Full::new(Bytes::new())) else {
                return;
            };
            let response = match self.client.request(request).await {
                Ok(response) => response,
                Err(e) => return self.report(format!("the server's GET stream failed: {e}")),
            };
            let status = response.status();
            if status == StatusCode::METHOD_NOT_ALLOWED {
                tracing::debug!("http client: the server offers no GET stream");
                return;
            }
            if !status.is_success() {
                return self.report(format!("the server's GET stream answered HTTP {status}"));
            }
            let mut body = response.into_body();
            let mut got = false;
            while let Some(Ok(frame)) = body.frame().await {
                let Ok(chunk) = frame.into_data() else {
                    continue;
                };
                for event in decoder.push(&chunk) {
                    got = true;
                    if event.data.is_empty() {
                        continue; // a priming event
                    }
                    match serde_json::from_str::<Value>(&event.data) {
                        Ok(value) => self.deliver(value),
                        Err(e) => {
                            self.report(format!("skipped an SSE event that is not JSON: {e}"))
                        }
                    }
                }
            }
            decoder.finish();
            idle = if got { 0 } else { idle + 1 };
            if idle > MAX_IDLE_RECONNECTS {
                return self.report("the server's GET stream keeps ending empty; stopped".into());
            }
            let wait = decoder.retry().unwrap_or(DEFAULT_RECONNECT_MS);
            tokio::time::sleep(Duration::from_millis(wait)).await;
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
            self.shared.exchange(message).await?;
            if initialized {
                self.shared.stop_listening();
                let task = tokio::spawn(self.shared.clone().listen());
                *lock(&self.shared.listener) = Some(task);
            }
            Ok(())
        })
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.shared.stop_listening();
            lock(&self.shared.sink).take();
            lock(&self.shared.version).take();
            let Some(session) = lock(&self.shared.session).take() else {
                return;
            };
            let mut builder = Request::builder()
                .method(Method::DELETE)
                .uri(self.shared.uri.clone())
                .header(MCP_SESSION_HEADER, &session);
            for (name, value) in &self.shared.headers {
                builder = builder.header(name, value);
            }
            if let Ok(request) = builder.body(Full::new(Bytes::new())) {
                let delete = self.shared.client.request(request);
                match tokio::time::timeout(Duration::from_secs(2), delete).await {
                    Ok(Ok(r)) => {
                        tracing::debug!(status = %r.status(), "http client: session ended")
                    }
                    Ok(Err(e)) => tracing::debug!(error = %e, "http client: DELETE failed"),
                    Err(_) => tracing::debug!("http client: DELETE timed out"),
                }
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
            self.shared.exchange_with(message, Some(headers)).await
        })
    }

    fn uses_headers(&self) -> bool {
        true
    }

    fn set_protocol_version(&self, version: &str) {
        *lock(&self.shared.version) = Some(version.to_owned());
    }

    fn session_id(&self) -> Option<String> {
        lock(&self.shared.session).clone()
    }
}

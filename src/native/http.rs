//! The stateless Streamable HTTP route (seed clause 12; spec 2025-06-18 / 2025-11-25
//! `basic/transports`, Streamable HTTP) as a `tower::Service`, so it mounts in plain hyper
//! ([`serve`]) and in axum (`Router::route_service("/mcp", routes)`).
//!
//! | request | answer |
//! |---|---|
//! | `POST {path}`, a request | `200`, the response as JSON, or as one SSE event when the client accepts `text/event-stream` (notifications the handler sends come first on that stream) |
//! | `POST`, a notification or a response | `202`, no body |
//! | `POST`, malformed JSON or an empty body | `400`, `-32700`, id `null` |
//! | `POST`, not a valid message (batch, bad envelope) | `400`, `-32600` (or `-32602` for non-object `params`) |
//! | `POST`, body over the limit (default 4 MiB) | `413`, `-32600` |
//! | `POST`, `Content-Type` absent or not `application/json` | `415`, `-32600` (an absent type is refused too: a browser may send a body without one cross-origin and without a CORS preflight, so requiring JSON keeps cross-site requests behind the preflight) |
//! | `POST`, `MCP-Protocol-Version` unsupported, or repeated with different values | `400`, `-32600` |
//! | `POST`, `Accept` admits neither JSON nor SSE | `406`, `-32600` |
//! | `GET` / `DELETE` / other verbs on `{path}` | `405` with `Allow: POST`, `-32000` |
//! | any other path | `404` |
//!
//! Behind [`crate::native::session::SessionLayer`] a request carries its
//! [`Session`] as a request extension; the route then answers SSE on a
//! session stream (a priming event for 2025-11-25 clients, every event with an id, resumable by
//! `GET` with `Last-Event-ID`), gives tools the session through their
//! [`RequestContext`], and assumes the session's negotiated
//! protocol version when the header is absent (else `2025-03-26`, spec Protocol Version Header).

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::{Body, Frame};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use tokio::net::TcpListener;

use crate::context::RequestContext;
use crate::era::{self, Era};
use crate::jsonrpc::{ErrorCode, ErrorObject, JsonRpcMessage, JsonRpcRequest, JsonRpcResponse};
use crate::native::stream::{sse_response, Detach};
use crate::protocol::is_supported_version;
use crate::server::McpServer;
use crate::session::Session;
use crate::sse::encode_event;

/// The default path the route is mounted at (seed `DEFAULT_MCP_PATH`).
pub const DEFAULT_MCP_PATH: &str = "/mcp";
/// The session header name (seed `MCP_SESSION_HEADER`).
pub const MCP_SESSION_HEADER: &str = "mcp-session-id";
/// The protocol version header name (seed `MCP_PROTOCOL_VERSION_HEADER`).
pub const MCP_PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";
/// How long a client may take to send a request's headers, and how long an idle keep-alive
/// connection stays open: 30 s.
pub const HEADER_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);
/// How long a client may take to send a request body: 30 s (then `408`).
pub const BODY_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// The default request body limit: 4 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// The default interval of SSE keep-alive comments: 15 s.
pub const DEFAULT_KEEP_ALIVE: Duration = Duration::from_secs(15);
/// The protocol version assumed over HTTP when the request has no `MCP-Protocol-Version` header
/// and no session says otherwise (spec `basic/transports`, Protocol Version Header).
pub const DEFAULT_HTTP_PROTOCOL_VERSION: &str = "2025-03-26";

/// The response body type of [`Routes`].
pub type ResponseBody = BoxBody<Bytes, Infallible>;

/// Options for [`Routes`] (seed `HTTPTransportOptions`).
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// The path (default `/mcp`).
    pub path: String,
    /// Whether an SSE reply is allowed (default `true`).
    pub streaming: bool,
    /// When the client accepts both JSON and SSE, answer JSON (default `false`: SSE, as the seed).
    pub prefer_json: bool,
    /// The request body limit in bytes (default 4 MiB); a larger body → `413`.
    pub max_body_bytes: usize,
    /// How often an open SSE stream gets a keep-alive comment (default 15 s); `None`: never.
    pub keep_alive: Option<Duration>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            path: DEFAULT_MCP_PATH.to_owned(),
            streaming: true,
            prefer_json: false,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            keep_alive: Some(DEFAULT_KEEP_ALIVE),
        }
    }
}

/// The stateless MCP route (seed `createMCPRoutes`): a `tower::Service<Request<B>>`.
#[derive(Clone, Debug)]
pub struct Routes {
    server: McpServer,
    options: Arc<HttpOptions>,
}

impl Routes {
    /// Mount `server` with `options`.
    pub fn new(server: McpServer, options: HttpOptions) -> Self {
        Routes {
            server,
            options: Arc::new(options),
        }
    }

    /// The options.
    pub fn options(&self) -> &HttpOptions {
        &self.options
    }

    /// Answer one request.
    pub async fn respond<B>(&self, request: Request<B>) -> Response<ResponseBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        if request.uri().path() != self.options.path {
            return plain(StatusCode::NOT_FOUND, "Not Found");
        }
        if request.method() != Method::POST {
            let mut response = rpc_error(
                StatusCode::METHOD_NOT_ALLOWED,
                ErrorObject::new(
                    ErrorCode::SERVER_ERROR,
                    "Method not allowed: this endpoint serves POST only",
                ),
            );
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("POST"));
            return response;
        }
        if !request
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(is_json_media_type)
        {
            return rpc_error(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                ErrorObject::invalid_request("Content-Type must be application/json"),
            );
        }
        let session = request.extensions().get::<Arc<Session>>().cloned();
        // A version outside the handshake era takes the modern path (SPEC-2026-07-28 §2.4),
        // whose validation answers it; a handshake-era one is checked here (spec basic/transports).
        let header_version = match protocol_version_header(request.headers()) {
            Ok(v) => v,
            Err(error) => return rpc_error(StatusCode::BAD_REQUEST, error),
        };
        let modern_header = header_version
            .as_deref()
            .is_some_and(|v| !era::is_legacy_version(v));
        let legacy_header = if session.is_some() || !modern_header {
            match read_protocol_version(request.headers()) {
                Ok(v) => v,
                Err(e) => return bad_protocol_version(e),
            }
        } else {
            None
        };
        let protocol_version = legacy_header.unwrap_or_else(|| {
            session.as_ref().map_or_else(
                || DEFAULT_HTTP_PROTOCOL_VERSION.to_owned(),
                |s| s.protocol_version().to_owned(),
            )
        });
        let headers = request.headers().clone();
        let accept = Accept::parse(request.headers());
        let sse = match (accept.json, accept.sse && self.options.streaming) {
            (false, false) => {
                return rpc_error(
                    StatusCode::NOT_ACCEPTABLE,
                    ErrorObject::invalid_request(
                        "Accept must admit application/json or text/event-stream",
                    ),
                )
            }
            (true, true) => !self.options.prefer_json,
            (json, _) => !json,
        };
        if let Some(response) = declared_too_large(request.headers(), self.options.max_body_bytes) {
            return response;
        }
        let body = match read_body(request.into_body(), self.options.max_body_bytes).await {
            Ok(body) => body,
            Err(response) => return response,
        };
        let message = match JsonRpcMessage::from_slice(&body) {
            Ok(message) => message,
            Err(invalid) => {
                return match invalid.response() {
                    Some(response) => json_response(StatusCode::BAD_REQUEST, &response),
                    None => {
                        tracing::debug!(error = %invalid, "http: dropped a malformed notification");
                        empty(StatusCode::ACCEPTED)
                    }
                };
            }
        };
        let mut ctx = RequestContext::new();
        let request = match message {
            JsonRpcMessage::Request(request) => request,
            other => {
                if let Some(session) = &session {
                    ctx = ctx.with_session(session.clone()).with_scope(session.id());
                }
                self.server.dispatch_with(other, ctx).await;
                return empty(StatusCode::ACCEPTED);
            }
        };
        // Classify by shape (SPEC-2026-07-28 §2.4): modern `_meta`, or a header naming a version
        // outside the handshake era, takes the modern validation path; a live session stays legacy.
        let modern =
            session.is_none() && (modern_header || era::has_modern_meta(request.params.as_ref()));
        if modern {
            if let Err(error) = self.validate_modern(&headers, header_version.as_deref(), &request)
            {
                return json_response(
                    StatusCode::BAD_REQUEST,
                    &JsonRpcResponse::error(Some(request.id), error),
                );
            }
            ctx.era = Era::Modern;
            ctx.protocol_version.clone_from(&header_version);
            ctx.transport_version = header_version;
        } else {
            ctx.protocol_version = Some(protocol_version);
            if let Some(session) = &session {
                ctx = ctx.with_session(session.clone()).with_scope(session.id());
                if request.method == "initialize" {
                    // Pushes not tied to a request (list changes, resource updates, requests of
                    // tools answered by JSON) go on the session's GET stream.
                    let push = session.clone();
                    self.server.attach(
                        &Arc::from(session.id()),
                        Arc::new(move |m| push.push(&m.to_json()).is_some()),
                    );
                }
            }
        }
        let message = JsonRpcMessage::Request(request);
        if sse {
            if let Some(session) = session {
                if let Some(response) = self.session_stream(&session, message.clone(), ctx.clone())
                {
                    return response;
                }
            }
            self.stream(message, ctx).await
        } else {
            if let Some(session) = &session {
                // No stream of its own: the request's messages go on the session's stream.
                let session = session.clone();
                ctx = ctx.with_outbound(Arc::new(move |m| session.push(&m.to_json()).is_some()));
            }
            match self.server.dispatch_with(message, ctx).await {
                Some(response) => json_response(status_of(modern, &response), &response),
                None => empty(StatusCode::ACCEPTED),
            }
        }
    }

    /// The modern checks that need headers, in the order of SPEC-2026-07-28 §2.3: the
    /// `MCP-Protocol-Version` header (`-32020`), `_meta` (`-32602`), header vs. body version
    /// (`-32020`), the version (`-32022`), then `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*` (`-32020`).
    fn validate_modern(
        &self,
        headers: &HeaderMap,
        version: Option<&str>,
        request: &JsonRpcRequest,
    ) -> Result<(), ErrorObject> {
        let version =
            version.ok_or_else(|| era::header_mismatch("missing MCP-Protocol-Version"))?;
        let meta = era::parse_meta(request.params.as_ref())?;
        era::check_version(&meta, Some(version))?;
        let schema = match (request.method.as_str(), era::expected_name(request)) {
            ("tools/call", Some(name)) => self
                .server
                .tools()
                .get(&name)
                .map(|t| t.descriptor().input_schema.clone()),
            _ => None,
        };
        let lookup = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        era::validate_headers(&lookup, request, schema.as_ref())
    }

    /// Answer a request as a stream: the handler's notifications as SSE events, then the response.
    /// When the response comes before any notification, a modern request gets it as JSON with its
    /// proper status (400/404 for the §2.6 errors) and a handshake-era one as a single SSE event.
    /// Closing the stream cancels the handler (SPEC-2026-07-28 §3.4).
    async fn stream(&self, message: JsonRpcMessage, ctx: RequestContext) -> Response<ResponseBody> {
        let modern = ctx.era == Era::Modern;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Out>();
        let out = tx.clone();
        let ctx = ctx.with_outbound(Arc::new(move |m| {
            out.send(Out::Message(m.to_json())).is_ok()
        }));
        let server = self.server.clone();
        tokio::spawn(async move {
            tokio::select! {
                response = server.dispatch_with(message, ctx) => {
                    if let Some(response) = response {
                        let _ = tx.send(Out::Final(response));
                    }
                }
                () = tx.closed() => tracing::debug!("http: response stream closed; request cancelled"),
            }
        });
        let first = match rx.recv().await {
            None => return empty(StatusCode::ACCEPTED),
            Some(Out::Final(response)) if modern => {
                return json_response(status_of(true, &response), &response)
            }
            Some(first) => first,
        };
        let keep_alive = self.options.keep_alive;
        let frames =
            futures::stream::unfold((Some(first), Some(rx)), move |(first, rx)| async move {
                let mut rx = rx?;
                let next = match first {
                    Some(out) => Some(out),
                    None => match keep_alive {
                        Some(period) => match tokio::time::timeout(period, rx.recv()).await {
                            Ok(next) => next,
                            Err(_) => {
                                return Some((
                                    Ok(Frame::data(Bytes::from_static(b":\n\n"))),
                                    (None, Some(rx)),
                                ))
                            }
                        },
                        None => rx.recv().await,
                    },
                };
                match next? {
                    Out::Message(json) => Some((
                        Ok(Frame::data(Bytes::from(encode_event(None, &json)))),
                        (None, Some(rx)),
                    )),
                    Out::Final(response) => {
                        let event = encode_event(None, &response.to_json());
                        Some((Ok(Frame::data(Bytes::from(event))), (None, None)))
                    }
                }
            });
        let mut response = Response::new(BodyExt::boxed(StreamBody::new(frames)));
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream"),
        );
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
        response
    }

    /// Answer a request on a session stream: priming, notifications and the response, each with
    /// an event id, so a dropped connection is resumed by `GET` with `Last-Event-ID`.
    fn session_stream(
        &self,
        session: &Arc<Session>,
        message: JsonRpcMessage,
        ctx: RequestContext,
    ) -> Option<Response<ResponseBody>> {
        let attached = session.open_request_stream()?;
        let stream = attached.stream;
        let notify_session = session.clone();
        let ctx = ctx.with_outbound(Arc::new(move |m| {
            notify_session.send(stream, &m.to_json()).is_some()
        }));
        let server = self.server.clone();
        let task_session = session.clone();
        tokio::spawn(async move {
            if let Some(response) = server.dispatch_with(message, ctx).await {
                task_session.send(stream, &response.to_json());
            }
            task_session.finish(stream);
        });
        let guard = Detach {
            session: session.clone(),
            stream,
            token: attached.token,
        };
        Some(sse_response(
            attached.events,
            self.options.keep_alive,
            Some(guard),
        ))
    }
}

/// `413` at once when `Content-Length` already says the body is over `limit` bytes (no waiting
/// for a body we would refuse).
pub(crate) fn declared_too_large(
    headers: &HeaderMap,
    limit: usize,
) -> Option<Response<ResponseBody>> {
    let declared = headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()?;
    (declared > limit as u64).then(|| {
        rpc_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            ErrorObject::invalid_request(format!("body over {limit} bytes")),
        )
    })
}

/// Read a whole request body of at most `limit` bytes.
///
/// # Errors
/// The answer to send instead: `413` with `-32600` over the limit, `400` with `-32700` when the
/// body cannot be read.
pub(crate) async fn read_body<B>(body: B, limit: usize) -> Result<Bytes, Response<ResponseBody>>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let read = tokio::time::timeout(BODY_READ_TIMEOUT, Limited::new(body, limit).collect());
    let Ok(read) = read.await else {
        return Err(rpc_error(
            StatusCode::REQUEST_TIMEOUT,
            ErrorObject::invalid_request(format!(
                "the body took over {} s",
                BODY_READ_TIMEOUT.as_secs()
            )),
        ));
    };
    match read {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(rpc_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            ErrorObject::invalid_request(format!("body over {limit} bytes")),
        )),
        Err(e) => Err(rpc_error(
            StatusCode::BAD_REQUEST,
            ErrorObject::parse_error(format!("body read failed: {e}")),
        )),
    }
}

/// What a request's task sends to its response.
enum Out {
    /// A notification or server→client request, as JSON.
    Message(String),
    /// The response; the stream ends after it.
    Final(JsonRpcResponse),
}

/// The HTTP status of a dispatch result: 200, except on the modern wire, where the errors of
/// SPEC-2026-07-28 §2.6 get 400 (`-32020`, `-32021`, `-32022`) or 404 (`-32601`).
fn status_of(modern: bool, response: &JsonRpcResponse) -> StatusCode {
    match (&response.payload, modern) {
        (Err(e), true)
            if [
                era::HEADER_MISMATCH,
                era::MISSING_REQUIRED_CLIENT_CAPABILITY,
                era::UNSUPPORTED_PROTOCOL_VERSION,
            ]
            .contains(&e.code) =>
        {
            StatusCode::BAD_REQUEST
        }
        (Err(e), true) if e.code == ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    }
}

/// The `MCP-Protocol-Version` header: `None` when absent; repeated identical values are one.
///
/// # Errors
/// `-32600` when repeated with different values or not visible ASCII.
fn protocol_version_header(headers: &HeaderMap) -> Result<Option<String>, ErrorObject> {
    let mut found: Option<String> = None;
    for value in headers.get_all(MCP_PROTOCOL_VERSION_HEADER) {
        let value = value
            .to_str()
            .map_err(|_| ErrorObject::invalid_request("MCP-Protocol-Version is not visible ASCII"))?
            .trim()
            .to_owned();
        match &found {
            Some(seen) if *seen != value => {
                return Err(ErrorObject::invalid_request(
                    "conflicting MCP-Protocol-Version headers",
                ))
            }
            _ => found = Some(value),
        }
    }
    Ok(found)
}

/// Why an `MCP-Protocol-Version` header was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BadProtocolVersion {
    /// Not a revision this server speaks (or not text).
    Unsupported(String),
    /// Repeated with different values.
    Conflicting,
}

/// Read the `MCP-Protocol-Version` header(s): `Ok(None)` when absent; `Ok(Some(v))` when every
/// value (repeated headers, or comma-separated) is the same supported revision.
///
/// # Errors
/// [`BadProtocolVersion`] for an unsupported value or differing values (the caller answers
/// `400`, spec `basic/transports`).
pub fn read_protocol_version(headers: &HeaderMap) -> Result<Option<String>, BadProtocolVersion> {
    let mut found: Option<String> = None;
    for value in headers.get_all(MCP_PROTOCOL_VERSION_HEADER) {
        let text = value
            .to_str()
            .map_err(|_| BadProtocolVersion::Unsupported("<not text>".into()))?;
        for part in text.split(',') {
            let part = part.trim();
            if !is_supported_version(part) {
                return Err(BadProtocolVersion::Unsupported(part.to_owned()));
            }
            match &found {
                Some(v) if v != part => return Err(BadProtocolVersion::Conflicting),
                _ => found = Some(part.to_owned()),
            }
        }
    }
    Ok(found)
}

/// The `400` for a refused `MCP-Protocol-Version` header.
pub(crate) fn bad_protocol_version(e: BadProtocolVersion) -> Response<ResponseBody> {
    let message = match e {
        BadProtocolVersion::Unsupported(v) => {
            format!("Bad Request: unsupported MCP-Protocol-Version {v:?}")
        }
        BadProtocolVersion::Conflicting => {
            "Bad Request: conflicting MCP-Protocol-Version headers".to_owned()
        }
    };
    rpc_error(
        StatusCode::BAD_REQUEST,
        ErrorObject::new(ErrorCode::INVALID_REQUEST, message),
    )
}

impl<B> tower_service::Service<Request<B>> for Routes
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = Response<ResponseBody>;
    type Error = Infallible;
    type Future = crate::BoxFuture<'static, Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let routes = self.clone();
        Box::pin(async move { Ok(routes.respond(request).await) })
    }
}

/// How long [`serve`] waits for open connections after `shutdown` resolved: 10 s.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Serve `service` (e.g. [`Routes`] or [`crate::native::endpoint::Endpoint`]) on `listener`
/// with HTTP/1.1 (upgrades enabled, for WebSocket) until `shutdown` resolves, then stop accepting
/// and wait for open connections to finish (graceful shutdown), at most [`SHUTDOWN_GRACE`].
/// Long-lived streams (SSE `GET`, WebSocket) only end when told: let `shutdown` call
/// [`Endpoint::shutdown`](crate::native::endpoint::Endpoint::shutdown) before it resolves.
///
/// # Errors
/// Only when accepting fails in a way that is not per-connection (logged and retried otherwise).
pub async fn serve<S, B>(
    listener: TcpListener,
    service: S,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()>
where
    S: tower_service::Service<
            Request<hyper::body::Incoming>,
            Response = Response<B>,
            Error = Infallible,
        > + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut connections = tokio::task::JoinSet::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        while connections.try_join_next().is_some() {}
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    tracing::warn!(error = %e, "http: accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let service = service.clone();
        let service = hyper::service::service_fn(move |request| {
            let mut service = service.clone();
            async move {
                futures::future::poll_fn(|cx| service.poll_ready(cx)).await?;
                service.call(request).await
            }
        });
        // A client must send a request's headers within HEADER_READ_TIMEOUT (also bounding an
        // idle keep-alive connection), so slow or silent connections do not hold resources.
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(hyper_util::rt::TokioTimer::new())
            .header_read_timeout(HEADER_READ_TIMEOUT)
            .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
            .with_upgrades();
        let mut stop = stop_rx.clone();
        connections.spawn(async move {
            let mut connection = std::pin::pin!(connection);
            let result = tokio::select! {
                result = connection.as_mut() => result,
                _ = async { let _ = stop.wait_for(|stop| *stop).await; } => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(e) = result {
                tracing::debug!(%peer, error = %e, "http: connection ended with an error");
            }
        });
    }
    let _ = stop_tx.send(true);
    // An upper bound, not a wait: connections still open after it are aborted.
    let drained = async { while connections.join_next().await.is_some() {} };
    if tokio::time::timeout(SHUTDOWN_GRACE, drained).await.is_err() {
        tracing::warn!("http: connections still open after the shutdown grace period");
    }
    Ok(())
}

/// What an `Accept` header admits: RFC 9110 §12.5.1 media ranges, case-insensitive, with
/// wildcards, and `q=0` excluding a range. An absent header admits everything.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Accept {
    /// `application/json` is acceptable.
    pub json: bool,
    /// `text/event-stream` is acceptable.
    pub sse: bool,
}

impl Accept {
    /// Read every `Accept` header of a request (the parsing is the core's [`crate::media::Accept`],
    /// shared with the wasm `fetch` handler; values that are not text are skipped).
    pub fn parse(headers: &HeaderMap) -> Accept {
        let values = headers
            .get_all(header::ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok());
        let media = crate::media::Accept::parse(values);
        // Headers present but none readable as text admit nothing, like an unknown range.
        let any = headers.get_all(header::ACCEPT).iter().next().is_some();
        let readable = headers
            .get_all(header::ACCEPT)
            .iter()
            .any(|v| v.to_str().is_ok());
        if any && !readable {
            return Accept {
                json: false,
                sse: false,
            };
        }
        Accept {
            json: media.json,
            sse: media.sse,
        }
    }
}

/// Whether a `Content-Type` is `application/json` (any case, any parameters such as charset).
pub fn is_json_media_type(value: &HeaderValue) -> bool {
    value
        .to_str()
        .ok()
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
}

/// Whether the request's `Accept` admits `text/event-stream` (seed `acceptsEventStream`).
pub fn accepts_event_stream(headers: &HeaderMap) -> bool {
    Accept::parse(headers).sse
}

/// The `mcp-session-id` header (seed `readSessionHeader`).
pub fn read_session_header(headers: &HeaderMap) -> Option<&str> {
    headers.get(MCP_SESSION_HEADER)?.to_str().ok()
}

/// The `Last-Event-ID` header (seed `readLastEventId`).
pub fn read_last_event_id(headers: &HeaderMap) -> Option<&str> {
    headers.get("last-event-id")?.to_str().ok()
}

pub(crate) fn json_response(
    status: StatusCode,
    response: &JsonRpcResponse,
) -> Response<ResponseBody> {
    let mut out = Response::new(Full::new(Bytes::from(response.to_json())).boxed());
    *out.status_mut() = status;
    out.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    out
}

pub(crate) fn rpc_error(status: StatusCode, error: ErrorObject) -> Response<ResponseBody> {
    json_response(status, &JsonRpcResponse::error(None, error))
}

pub(crate) fn empty(status: StatusCode) -> Response<ResponseBody> {
    let mut out = Response::new(Full::new(Bytes::new()).boxed());
    *out.status_mut() = status;
    out
}

pub(crate) fn plain(status: StatusCode, text: &'static str) -> Response<ResponseBody> {
    let mut out = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *out.status_mut() = status;
    out.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(v: &str) -> Accept {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT, HeaderValue::from_str(v).unwrap());
        Accept::parse(&h)
    }

    #[test]
    fn accept_parsing() {
        assert_eq!(
            accept("application/json, text/event-stream"),
            Accept {
                json: true,
                sse: true
            }
        );
        assert_eq!(
            accept("TEXT/EVENT-STREAM"),
            Accept {
                json: false,
                sse: true
            }
        );
        assert_eq!(
            accept("*/*"),
            Accept {
                json: true,
                sse: true
            }
        );
        assert_eq!(
            accept("*/*;q=0.5, application/json;q=0"),
            Accept {
                json: false,
                sse: true
            }
        );
        assert_eq!(
            accept("application/*"),
            Accept {
                json: true,
                sse: false
            }
        );
        assert_eq!(
            accept("text/html"),
            Accept {
                json: false,
                sse: false
            }
        );
        assert_eq!(
            Accept::parse(&HeaderMap::new()),
            Accept {
                json: true,
                sse: true
            }
        );
    }

    #[test]
    fn content_types() {
        for ok in [
            "application/json",
            "Application/JSON; charset=utf-8",
            "application/json;charset=UTF-8",
        ] {
            assert!(is_json_media_type(&HeaderValue::from_static(ok)), "{ok}");
        }
        assert!(!is_json_media_type(&HeaderValue::from_static("text/plain")));
    }
}

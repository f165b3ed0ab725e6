//! The Streamable HTTP route on hyper (seed clause 12; spec `basic/transports`,
//! <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>) as a
//! `tower::Service`, so it mounts in plain hyper ([`serve`]) and in axum
//! (`Router::route_service("/mcp", routes)`).
//!
//! A thin driver of the core's plan ([`crate::http::route`], where the decision table is): it
//! turns a `hyper::Request` into an [`HttpRequest`] — checking the head first
//! ([`Route::head`]), then reading the body with a limit and [`BODY_READ_TIMEOUT`] — and the
//! [`Answer`] into a `hyper::Response`, an event stream becoming the native SSE body (keep-alive
//! comments on a tokio timer). Dispatch feeding an event stream runs on `tokio::spawn`.
//!
//! Behind [`crate::native::session::SessionLayer`] a request carries its [`Session`] as a
//! request extension; the route then answers in that session (see the core's table).

use std::borrow::Cow;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Body as HttpBody;
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use hyper::{Request, Response, StatusCode};
use tokio::net::TcpListener;

use crate::http::answer::{Answer, AnswerBody};
use crate::http::negotiate;
use crate::http::request::{Body, Fields, HttpRequest, HttpVersion, Occurrence};
use crate::http::route::{Head, RequestHead, Route, RouteOptions, Spawn};
use crate::http::session::Session;
use crate::native::admission::Admission;
use crate::native::stream::sse_body;
use crate::server::McpServer;

pub use crate::http::headers::{
    BODY_READ_TIMEOUT, DEFAULT_HTTP_PROTOCOL_VERSION, DEFAULT_KEEP_ALIVE, DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MCP_PATH, HEADER_READ_TIMEOUT,
};
pub use crate::http::negotiate::{read_protocol_version, BadProtocolVersion};
pub use crate::native::admission::ServeOptions;
pub use crate::native::stream::ResponseBody;

/// The session header name (seed `MCP_SESSION_HEADER`).
pub const MCP_SESSION_HEADER: &str = crate::http::headers::MCP_SESSION_ID;
/// The protocol version header name (seed `MCP_PROTOCOL_VERSION_HEADER`).
pub const MCP_PROTOCOL_VERSION_HEADER: &str = crate::http::headers::MCP_PROTOCOL_VERSION;

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

impl HttpOptions {
    /// The core route's share of the options (all but the host's keep-alive timer).
    pub fn route_options(&self) -> RouteOptions {
        RouteOptions {
            path: self.path.clone(),
            streaming: self.streaming,
            prefer_json: self.prefer_json,
            max_body_bytes: self.max_body_bytes,
        }
    }
}

/// The spawner of the native hosts: `tokio::spawn`.
pub(crate) fn tokio_spawner() -> Spawn {
    Arc::new(|future| {
        tokio::spawn(future);
    })
}

/// The stateless MCP route (seed `createMCPRoutes`): a `tower::Service<Request<B>>`.
#[derive(Clone, Debug)]
pub struct Routes {
    route: Route,
    options: Arc<HttpOptions>,
}

impl Routes {
    /// Mount `server` with `options`.
    pub fn new(server: McpServer, options: HttpOptions) -> Self {
        Routes {
            route: Route::new(server, options.route_options(), tokio_spawner()),
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
        B: HttpBody + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        drive(
            &self.route,
            self.options.keep_alive,
            request,
            Plan::RouteOnly,
        )
        .await
    }
}

/// Which part of the plan [`drive`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Plan {
    /// The whole plan (the session half too, when the route has one).
    Whole,
    /// The route alone, in the session a layer in front attached (request extension).
    RouteOnly,
}

/// Run `route` for a hyper request: head, body, answer. The header fields are read in place
/// from hyper's map (never copied per request); only a route with a bearer-token gate describes
/// the request as the core's [`HttpRequest`] first, which its gate reads.
pub(crate) async fn drive<B>(
    route: &Route,
    keep_alive: Option<Duration>,
    request: Request<B>,
    plan: Plan,
) -> Response<ResponseBody>
where
    B: HttpBody + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (parts, body) = request.into_parts();
    let session = match plan {
        Plan::RouteOnly => parts.extensions.get::<Arc<Session>>().cloned(),
        Plan::Whole => None,
    };
    let mut identity = None;
    if route.auth().is_some() {
        let mut described = describe(&parts);
        if let Some(answer) = route.authorize(&mut described).await {
            return response(answer, keep_alive);
        }
        identity = described.identity;
    }
    let head = RequestHead {
        method: parts.method.as_str(),
        path: parts.uri.path(),
        fields: &parts.headers,
        version: wire_version(&parts.extensions, parts.version),
    };
    let (decided, checked) = route.head_checked(&head, session.as_ref());
    let body = match decided {
        Head::Answer(answer) => return response(answer, keep_alive),
        Head::ReadBody { limit } => read_body(body, limit).await,
        Head::NoBody => Body::default(),
    };
    let answer = match plan {
        Plan::Whole => route.respond_checked(&head, body, identity, checked).await,
        Plan::RouteOnly => {
            route
                .respond_in_checked(&head, body, identity, session, checked)
                .await
        }
    };
    response(answer, keep_alive)
}

/// The names the core reads, as hyper's names made once: a lookup by one skips parsing the
/// name's text (what a lookup by `&str` does every time).
fn known_name(name: &str) -> Option<&'static HeaderName> {
    use crate::http::headers as h;
    static MCP_SESSION_ID: HeaderName = HeaderName::from_static(h::MCP_SESSION_ID);
    static MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static(h::MCP_PROTOCOL_VERSION);
    static MCP_METHOD: HeaderName = HeaderName::from_static(h::MCP_METHOD);
    static MCP_NAME: HeaderName = HeaderName::from_static(h::MCP_NAME);
    static LAST_EVENT_ID: HeaderName = HeaderName::from_static(h::LAST_EVENT_ID);
    Some(match name {
        h::HOST => &hyper::header::HOST,
        h::CONTENT_TYPE => &hyper::header::CONTENT_TYPE,
        h::CONTENT_LENGTH => &hyper::header::CONTENT_LENGTH,
        h::ACCEPT => &hyper::header::ACCEPT,
        h::ORIGIN => &hyper::header::ORIGIN,
        h::AUTHORIZATION => &hyper::header::AUTHORIZATION,
        h::MCP_SESSION_ID => &MCP_SESSION_ID,
        h::MCP_PROTOCOL_VERSION => &MCP_PROTOCOL_VERSION,
        h::MCP_METHOD => &MCP_METHOD,
        h::MCP_NAME => &MCP_NAME,
        h::LAST_EVENT_ID => &LAST_EVENT_ID,
        _ => return None,
    })
}

impl Fields for HeaderMap {
    fn field_values(&self, name: &str) -> Vec<Option<&str>> {
        match known_name(name) {
            Some(known) => self
                .get_all(known)
                .iter()
                .map(|v| v.to_str().ok())
                .collect(),
            None => self.get_all(name).iter().map(|v| v.to_str().ok()).collect(),
        }
    }

    fn field(&self, name: &str) -> Option<&str> {
        match known_name(name) {
            Some(known) => self.get(known),
            None => self.get(name),
        }
        .and_then(|v| v.to_str().ok())
    }

    fn has_field(&self, name: &str) -> bool {
        match known_name(name) {
            Some(known) => self.contains_key(known),
            None => self.contains_key(name),
        }
    }

    fn field_count(&self, name: &str) -> usize {
        match known_name(name) {
            Some(known) => self.get_all(known).iter().count(),
            None => self.get_all(name).iter().count(),
        }
    }

    fn occurrence(&self, name: &str) -> Occurrence<'_> {
        let all = match known_name(name) {
            Some(known) => self.get_all(known),
            None => self.get_all(name),
        };
        let mut values = all.iter();
        match (values.next(), values.next()) {
            (None, _) => Occurrence::Absent,
            (Some(value), None) => Occurrence::Once(value.to_str().ok()),
            (Some(_), Some(_)) => Occurrence::Repeated,
        }
    }

    fn repeats_field_starting_with(&self, prefix: &str) -> bool {
        // The map lists a name's values one after another: a repeat is the same name twice in a
        // row.
        let mut last: Option<&HeaderName> = None;
        self.iter().any(|(name, _)| {
            let repeat = last == Some(name);
            last = Some(name);
            repeat && crate::http::request::starts_with_ignore_case(name.as_str(), prefix)
        })
    }

    fn field_names(&self) -> Vec<String> {
        self.keys().map(|name| name.as_str().to_owned()).collect()
    }

    fn has_field_starting_with(&self, prefix: &str) -> bool {
        self.keys()
            .any(|name| crate::http::request::starts_with_ignore_case(name.as_str(), prefix))
    }
}

/// A hyper request head as the core's plain request (no body yet): method, path, header
/// fields, HTTP version and the target's authority (absolute-form, HTTP/2 `:authority`).
pub(crate) fn describe(parts: &hyper::http::request::Parts) -> HttpRequest {
    HttpRequest {
        method: parts.method.as_str().to_owned(),
        path: parts.uri.path().to_owned(),
        headers: fields(&parts.headers),
        body: Body::default(),
        peer_loopback: None,
        version: wire_version(&parts.extensions, parts.version),
        authority: parts.uri.authority().map(|a| a.as_str().to_owned()),
        identity: None,
    }
}

/// [`describe`] for a whole request (its head only).
pub(crate) fn describe_head<B>(request: &Request<B>) -> HttpRequest {
    HttpRequest {
        method: request.method().as_str().to_owned(),
        path: request.uri().path().to_owned(),
        headers: fields(request.headers()),
        body: Body::default(),
        peer_loopback: None,
        version: wire_version(request.extensions(), request.version()),
        authority: request.uri().authority().map(|a| a.as_str().to_owned()),
        identity: None,
    }
}

/// Marks a request [`serve_with`] read from a connection: only then is its HTTP version the
/// wire's. A request built in process (a test, a `tower::ServiceExt::oneshot`) carries hyper's
/// default `HTTP/1.1` and rarely a `Host`, so it is described with no version.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FromConnection;

/// The version of a request as the core should judge it: the wire's for a request
/// [`serve_with`] received ([`FromConnection`]), `None` otherwise.
pub(crate) fn wire_version(
    extensions: &hyper::http::Extensions,
    version: hyper::Version,
) -> Option<HttpVersion> {
    extensions
        .get::<FromConnection>()
        .and_then(|_| version_of(version))
}

/// A hyper version as the core's.
pub(crate) fn version_of(version: hyper::Version) -> Option<HttpVersion> {
    Some(match version {
        hyper::Version::HTTP_09 => HttpVersion::Http09,
        hyper::Version::HTTP_10 => HttpVersion::Http10,
        hyper::Version::HTTP_11 => HttpVersion::Http11,
        hyper::Version::HTTP_2 => HttpVersion::Http2,
        hyper::Version::HTTP_3 => HttpVersion::Http3,
        _ => return None,
    })
}

/// A header map as the core's `(name, value)` pairs.
pub(crate) fn fields(headers: &HeaderMap) -> Vec<(String, Option<String>)> {
    headers
        .iter()
        .map(|(name, value)| {
            let value = value.to_str().ok().map(str::to_owned);
            (name.as_str().to_owned(), value)
        })
        .collect()
}

/// Read a whole request body of at most `limit` bytes, within [`BODY_READ_TIMEOUT`].
pub(crate) async fn read_body<B>(body: B, limit: usize) -> Body
where
    B: HttpBody + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let read = tokio::time::timeout(BODY_READ_TIMEOUT, Limited::new(body, limit).collect());
    match read.await {
        Err(_) => Body::TimedOut(BODY_READ_TIMEOUT),
        Ok(Ok(collected)) => Body::Bytes(collected.to_bytes().to_vec()),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Body::TooLarge,
        Ok(Err(e)) => Body::Unreadable(e.to_string()),
    }
}

/// The core's answer as a hyper response; an event stream gets keep-alive comments every
/// `keep_alive`.
pub(crate) fn response(answer: Answer, keep_alive: Option<Duration>) -> Response<ResponseBody> {
    let body = match answer.body {
        AnswerBody::Empty => Full::new(Bytes::new()).boxed(),
        AnswerBody::Json(text) => Full::new(Bytes::from(text)).boxed(),
        AnswerBody::Text(text) => Full::new(Bytes::from_static(text.as_bytes())).boxed(),
        AnswerBody::Events(events) => sse_body(events, keep_alive),
    };
    let mut out = Response::new(body);
    *out.status_mut() = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::OK);
    let headers = out.headers_mut();
    headers.reserve(answer.headers.len());
    for (name, value) in answer.headers {
        if let (Some(name), Some(value)) = (header_name(name), header_value(value)) {
            headers.append(name, value);
        }
    }
    out
}

/// A header name of an answer: one the core writes is a name made once (no parsing per
/// answer); any other is parsed (and dropped when invalid).
fn header_name(name: &'static str) -> Option<HeaderName> {
    use crate::http::headers as h;
    static X_ACCEL_BUFFERING: HeaderName = HeaderName::from_static(h::X_ACCEL_BUFFERING);
    static MCP_SESSION_ID: HeaderName = HeaderName::from_static(h::MCP_SESSION_ID);
    static MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static(h::MCP_PROTOCOL_VERSION);
    Some(match name {
        h::CONTENT_TYPE => hyper::header::CONTENT_TYPE,
        h::CACHE_CONTROL => hyper::header::CACHE_CONTROL,
        h::X_ACCEL_BUFFERING => X_ACCEL_BUFFERING.clone(),
        h::MCP_SESSION_ID => MCP_SESSION_ID.clone(),
        h::MCP_PROTOCOL_VERSION => MCP_PROTOCOL_VERSION.clone(),
        h::WWW_AUTHENTICATE => hyper::header::WWW_AUTHENTICATE,
        h::ALLOW => hyper::header::ALLOW,
        h::RETRY_AFTER => hyper::header::RETRY_AFTER,
        _ => return HeaderName::from_bytes(name.as_bytes()).ok(),
    })
}

/// A header value of an answer: a borrowed (constant) one without a copy, an owned one moved
/// (its text becomes the value's bytes); dropped when not a valid value.
fn header_value(value: Cow<'static, str>) -> Option<HeaderValue> {
    use crate::http::headers as h;
    // The values an answer carries most, made (and checked) at compile time.
    const TEXT_EVENT_STREAM: HeaderValue = HeaderValue::from_static(h::TEXT_EVENT_STREAM);
    const APPLICATION_JSON: HeaderValue = HeaderValue::from_static(h::APPLICATION_JSON);
    const NO_CACHE: HeaderValue = HeaderValue::from_static(h::NO_CACHE);
    const NO: HeaderValue = HeaderValue::from_static("no");
    match value {
        Cow::Borrowed(h::TEXT_EVENT_STREAM) => Some(TEXT_EVENT_STREAM),
        Cow::Borrowed(h::APPLICATION_JSON) => Some(APPLICATION_JSON),
        Cow::Borrowed(h::NO_CACHE) => Some(NO_CACHE),
        Cow::Borrowed("no") => Some(NO),
        // `from_static`'s own rule (visible ASCII or tab) checked first, as it panics
        // otherwise; other text is copied as parsed.
        Cow::Borrowed(constant)
            if constant
                .bytes()
                .all(|b| b == b'\t' || (b' '..=b'~').contains(&b)) =>
        {
            Some(HeaderValue::from_static(constant))
        }
        Cow::Borrowed(text) => HeaderValue::from_str(text).ok(),
        Cow::Owned(text) => HeaderValue::from_maybe_shared(Bytes::from(text)).ok(),
    }
}

impl<B> tower_service::Service<Request<B>> for Routes
where
    B: HttpBody + Send + 'static,
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

/// How long [`serve`] waits for open connections after `shutdown` resolved: 10 s (the default of
/// [`ServeOptions::shutdown_grace`]).
pub const SHUTDOWN_GRACE: Duration = crate::native::admission::DEFAULT_SHUTDOWN_GRACE;

/// The bound on a request's head (request line and headers) the native server reads
/// (hyper's `max_header_size`), and on the read buffer of the native HTTP client, which bounds a
/// response's head (hyper's `max_buf_size`): 64 KiB. A longer request head is refused with
/// `431 Request Header Fields Too Large` before any route runs; a longer response head fails the
/// client request with a transport error.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;

/// The most header fields in one request head (server) or response head (client): 100, hyper's
/// default, set explicitly. More are refused like an over-long head (`431` on the server).
pub const MAX_HEADERS: usize = 100;

/// What [`serve`] runs: a cloneable tower service of hyper requests that never fails
/// (`Error = Infallible`: every failure is an HTTP answer) and answers with a `B` body, `Send`
/// throughout as tokio's tasks need. Implemented for every such service ([`Routes`],
/// [`Endpoint`](crate::native::endpoint::Endpoint), either behind tower layers).
pub trait HttpService<B>:
    tower_service::Service<
        Request<hyper::body::Incoming>,
        Response = Response<B>,
        Error = Infallible,
        Future: Send + 'static,
    > + Clone
    + Send
    + 'static
{
}

impl<S, B> HttpService<B> for S where
    S: tower_service::Service<
            Request<hyper::body::Incoming>,
            Response = Response<B>,
            Error = Infallible,
            Future: Send + 'static,
        > + Clone
        + Send
        + 'static
{
}

/// The body of an [`HttpService`]'s answers: a hyper body that is `Send`, with `Send` chunks
/// and errors hyper can box. Implemented for every such body.
pub trait ServedBody:
    HttpBody<Data: Send, Error: Into<Box<dyn std::error::Error + Send + Sync>>> + Send + 'static
{
}

impl<B> ServedBody for B where
    B: HttpBody<Data: Send, Error: Into<Box<dyn std::error::Error + Send + Sync>>> + Send + 'static
{
}

/// Serve `service` (e.g. [`Routes`] or [`crate::native::endpoint::Endpoint`]) on `listener`
/// with HTTP/1.1 (upgrades enabled, for WebSocket) until `shutdown` resolves, then stop accepting
/// and wait for open connections to finish (graceful shutdown), at most [`SHUTDOWN_GRACE`].
/// Long-lived streams (SSE `GET`, WebSocket) only end when told: let `shutdown` call
/// [`Endpoint::shutdown`](crate::native::endpoint::Endpoint::shutdown) before it resolves.
/// Connections are admitted and closed by the defaults of [`ServeOptions`] ([`serve_with`]).
///
/// # Errors
/// Only when accepting fails in a way that is not per-connection (logged and retried otherwise).
pub async fn serve<S, B>(
    listener: TcpListener,
    service: S,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()>
where
    S: HttpService<B>,
    B: ServedBody,
{
    serve_with(listener, service, shutdown, ServeOptions::default()).await
}

/// [`serve`] with `options`: at most [`ServeOptions::max_connections`] open connections (a new
/// one beyond them gets `503` at once), each closed by lingering (see
/// [`crate::native::admission`]), and at most [`ServeOptions::shutdown_grace`] of waiting for
/// open connections after `shutdown` resolved.
///
/// # Errors
/// As [`serve`].
pub async fn serve_with<S, B>(
    listener: TcpListener,
    service: S,
    shutdown: impl Future<Output = ()>,
    options: ServeOptions,
) -> io::Result<()>
where
    S: HttpService<B>,
    B: ServedBody,
{
    let grace = options.shutdown_grace;
    let admission = Admission::new(options);
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
        let Some(stream) = admission.admit(stream) else {
            continue;
        };
        let service = service.clone();
        let service = hyper::service::service_fn(move |mut request: Request<_>| {
            request.extensions_mut().insert(FromConnection);
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
            .max_header_size(MAX_HEAD_BYTES)
            .max_headers(MAX_HEADERS)
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
    // No new connections from now on: closing the listener makes the kernel refuse them (kept
    // open through the drain, they completed their handshake and waited unanswered).
    drop(listener);
    let _ = stop_tx.send(true);
    // An upper bound, not a wait: connections still open after it are aborted.
    let drained = async { while connections.join_next().await.is_some() {} };
    if tokio::time::timeout(grace, drained).await.is_err() {
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
    /// Read every `Accept` header of a request (the core's [`negotiate::accept`], shared with the
    /// wasm `fetch` handler; headers present but none readable as text admit nothing).
    pub fn parse(headers: &HeaderMap) -> Accept {
        let media = negotiate::accept(headers);
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
        .is_ok_and(crate::http::media::is_json_media_type)
}

/// Whether the request's `Accept` admits `text/event-stream` (seed `acceptsEventStream`).
pub fn accepts_event_stream(headers: &HeaderMap) -> bool {
    Accept::parse(headers).sse
}

/// The `mcp-session-id` header (seed `readSessionHeader`).
pub fn read_session_header(headers: &HeaderMap) -> Option<&str> {
    headers.field(MCP_SESSION_HEADER)
}

/// The `Last-Event-ID` header (seed `readLastEventId`).
pub fn read_last_event_id(headers: &HeaderMap) -> Option<&str> {
    headers.field(crate::http::headers::LAST_EVENT_ID)
}

pub(crate) fn empty(status: StatusCode) -> Response<ResponseBody> {
    response(Answer::empty(status.as_u16()), None)
}

pub(crate) fn plain(status: StatusCode, text: &'static str) -> Response<ResponseBody> {
    response(Answer::text(status.as_u16(), text), None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::session::{SessionOptions, SessionStore};
    use crate::ServerOptions;
    use hyper::header;

    const PING: &str = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;
    const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

    /// The status, the JSON-RPC error code (if any) and the session header of a hyper answer.
    async fn outcome(response: Response<ResponseBody>) -> (u16, Option<i64>, bool) {
        let status = response.status().as_u16();
        let minted = response.headers().contains_key(MCP_SESSION_HEADER);
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let text = String::from_utf8_lossy(&body);
        let json = text.strip_prefix("event: message\ndata: ").unwrap_or(&text);
        let code = serde_json::from_str::<serde_json::Value>(json.trim())
            .ok()
            .and_then(|v| v["error"]["code"].as_i64());
        (status, code, minted)
    }

    /// Hyper's map tells a repeated `mcp-` field in one pass as listing the names and counting
    /// each would, whatever the order the fields came in; and reads the core's names (made once)
    /// as it reads them by text.
    #[test]
    fn header_map_reads_as_by_name() {
        let cases: Vec<Vec<(&str, &str)>> = vec![
            vec![],
            vec![("accept", "a"), ("accept", "b")],
            vec![("mcp-session-id", "a")],
            vec![
                ("mcp-session-id", "a"),
                ("host", "h"),
                ("Mcp-Session-Id", "a"),
            ],
            vec![("mcp-param-x", "1"), ("mcp-param-y", "1")],
            vec![("mcp-param-x", "1"), ("accept", "a"), ("mcp-param-x", "2")],
            vec![("x-mcp-a", "1"), ("x-mcp-a", "1")],
        ];
        for fields in cases {
            let mut map = HeaderMap::new();
            for (name, value) in &fields {
                map.append(
                    HeaderName::from_bytes(name.as_bytes()).unwrap(),
                    HeaderValue::from_str(value).unwrap(),
                );
            }
            let by_names = map
                .field_names()
                .iter()
                .any(|n| n.starts_with("mcp-") && map.field_count(n) > 1);
            assert_eq!(
                map.repeats_field_starting_with("mcp-"),
                by_names,
                "{fields:?}"
            );
            for name in ["mcp-session-id", "accept", "host", "mcp-param-x", "x-mcp-a"] {
                let by_text: Vec<Option<&str>> =
                    map.get_all(name).iter().map(|v| v.to_str().ok()).collect();
                assert_eq!(map.field_values(name), by_text, "{name}");
                assert_eq!(map.field_count(name), by_text.len(), "{name}");
                assert_eq!(map.has_field(name), !by_text.is_empty(), "{name}");
                assert_eq!(
                    map.field(name),
                    by_text.first().copied().flatten(),
                    "{name}"
                );
            }
        }
    }

    /// The answer's fields become hyper's as parsing each would make them (the core's names and
    /// constant values taken without a copy): a name that is no token and a value that is no
    /// header value are dropped; an uppercase name is lowercased.
    #[test]
    fn answer_fields_become_hyper_fields_as_parsed() {
        let tchars = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyz";
        for b in tchars.bytes() {
            let name: &'static str = Box::leak(format!("x{}", b as char).into_boxed_str());
            assert_eq!(
                header_name(name),
                HeaderName::from_bytes(name.as_bytes()).ok()
            );
        }
        let fields: Vec<(&'static str, &str)> = vec![
            ("content-type", "text/event-stream"),
            ("cache-control", "no-cache"),
            ("mcp-session-id", "0123abcd"),
            ("X-Upper", "v"),
            ("bad name", "v"),
            ("x-bad-value", "a\nb"),
            ("x-obs-text", "caf\u{e9}"),
            ("", "v"),
        ];
        let mut answer = Answer::empty(200);
        for (name, value) in &fields {
            answer = answer.with_header(name, *value);
        }
        let ours = response(answer, None);
        let mut parsed = HeaderMap::new();
        for (name, value) in &fields {
            if let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(value),
            ) {
                parsed.append(name, value);
            }
        }
        assert_eq!(ours.headers(), &parsed);
        assert_eq!(ours.headers().len(), 5, "{:?}", ours.headers());
    }

    /// Every request answered by the native host (fields read in place from hyper's map, the
    /// head's checks not made again) gets what the core answers the same request described as
    /// an `HttpRequest` (fields copied, every check made by `respond`).
    #[tokio::test]
    async fn fields_read_in_place_answer_as_the_described_request() {
        type Case = (
            &'static str,
            &'static str,
            Vec<(&'static str, &'static str)>,
            &'static str,
        );
        let json = ("content-type", "application/json");
        let accept = ("accept", "application/json, text/event-stream");
        let host = ("host", "127.0.0.1:1");
        let cases: Vec<Case> = vec![
            ("POST", "/mcp", vec![host, json, accept], PING),
            ("POST", "/mcp", vec![host, json, accept], INITIALIZE),
            ("POST", "/mcp", vec![json, accept], PING),
            ("POST", "/other", vec![host, json, accept], PING),
            ("PUT", "/mcp", vec![host, json, accept], PING),
            (
                "GET",
                "/mcp",
                vec![host, ("accept", "text/event-stream")],
                "",
            ),
            ("DELETE", "/mcp", vec![host], ""),
            ("POST", "/mcp", vec![host, accept], PING),
            (
                "POST",
                "/mcp",
                vec![host, json, ("accept", "text/html")],
                PING,
            ),
            (
                "POST",
                "/mcp",
                vec![host, json, ("accept", "TEXT/Event-Stream;q=0")],
                PING,
            ),
            (
                "POST",
                "/mcp",
                vec![host, json, accept, ("content-length", "99999999")],
                PING,
            ),
            (
                "POST",
                "/mcp",
                vec![host, json, accept, ("mcp-protocol-version", "2025-06-18")],
                PING,
            ),
            (
                "POST",
                "/mcp",
                vec![host, json, accept, ("mcp-protocol-version", "1999-01-01")],
                PING,
            ),
            (
                "POST",
                "/mcp",
                vec![
                    host,
                    json,
                    accept,
                    ("mcp-protocol-version", "2025-06-18, 2025-06-18"),
                ],
                PING,
            ),
            (
                "POST",
                "/mcp",
                vec![
                    host,
                    json,
                    accept,
                    ("mcp-protocol-version", "2025-06-18, 2025-03-26"),
                ],
                PING,
            ),
            (
                "POST",
                "/mcp",
                vec![
                    host,
                    json,
                    accept,
                    ("mcp-protocol-version", "2025-06-18"),
                    ("MCP-Protocol-Version", " 2025-06-18"),
                ],
                PING,
            ),
            (
                "POST",
                "/mcp",
                vec![
                    host,
                    json,
                    accept,
                    ("mcp-session-id", "a"),
                    ("mcp-session-id", "b"),
                ],
                PING,
            ),
            (
                "POST",
                "/mcp",
                vec![host, json, accept, ("mcp-session-id", "nope")],
                PING,
            ),
            // Not text (a byte past ASCII): present, naming no session / admitting nothing.
            (
                "POST",
                "/mcp",
                vec![host, json, accept, ("mcp-session-id", "caf\u{e9}")],
                PING,
            ),
            (
                "POST",
                "/mcp",
                vec![host, json, ("accept", "caf\u{e9}")],
                PING,
            ),
            (
                "POST",
                "/mcp",
                vec![host, json, accept, ("mcp-protocol-version", "caf\u{e9}")],
                PING,
            ),
            (
                "POST",
                "/mcp",
                vec![
                    host,
                    json,
                    accept,
                    ("mcp-param-x", "1"),
                    ("mcp-param-x", "2"),
                ],
                PING,
            ),
            ("POST", "/mcp", vec![host, json, accept], "{not json"),
        ];
        let server = McpServer::new(ServerOptions::new("in-place", "1"));
        let stateless = Route::new(server.clone(), RouteOptions::default(), tokio_spawner());
        let store = Arc::new(SessionStore::new(SessionOptions::default(), Arc::new(|| 0)));
        let sessions = stateless.clone().with_sessions(store);
        for route in [stateless, sessions] {
            for (method, path, fields, body) in &cases {
                let request = || {
                    let mut request = Request::builder().method(*method).uri(*path);
                    for (name, value) in fields {
                        request = request.header(*name, *value);
                    }
                    let mut request = request
                        .body(Full::new(Bytes::from_static(body.as_bytes())))
                        .unwrap();
                    request.extensions_mut().insert(FromConnection);
                    request
                };
                // The core's request as the host described it before (every field copied).
                let (parts, _) = request().into_parts();
                let mut described = describe(&parts);
                described.body = Body::Bytes(body.as_bytes().to_vec());
                let native = outcome(drive(&route, None, request(), Plan::Whole).await).await;
                let core = outcome(response(route.respond(described).await, None)).await;
                assert_eq!(native, core, "{method} {path} {fields:?} {body}");
            }
        }
    }

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

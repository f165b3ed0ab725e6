//! The session layer (seed `createMCPSession`, clauses 18 and 19; spec 2025-06-18 / 2025-11-25
//! `basic/transports`, Session Management and Resumability): a `tower` layer in front of the
//! session-agnostic [`Routes`](crate::native::http::Routes) that makes its path stateful.
//!
//! | request on `{path}` | answer |
//! |---|---|
//! | `POST` `initialize` (valid params), no `mcp-session-id` | a session is minted; the inner route answers, and a successful (`2xx`) answer carries `mcp-session-id` (any other answer forgets the session) |
//! | `POST` `initialize`, no header, at the session cap | `503` with `Retry-After`, `-32000` (see [`SessionStore::mint`] for why it refuses rather than evicting) |
//! | `POST` anything else, no header | `400`, `-32600` (malformed JSON is left to the route: `400`, `-32700`) |
//! | any verb with an unknown, ended or expired id | `404`, `-32600` "Session not found" |
//! | `POST` with a live id | the route answers with the session attached (request extension `Arc<Session>`) |
//! | `GET`, `Accept` admits `text/event-stream`, live id | `200 text/event-stream`: the replay after `Last-Event-ID`, then live events, keep-alive comments; see [`Session::resume`] |
//! | `GET` whose `Accept` does not admit SSE | `406` |
//! | `GET` / `DELETE` without the header | `400` |
//! | `DELETE`, live id | `204`: the session ends, its streams close; the id then answers `404` |
//! | `GET` / `DELETE` with an unsupported `MCP-Protocol-Version` | `400` |
//! | other verbs | `405` with `Allow: GET, POST, DELETE` |
//! | other paths | passed to the inner service |

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Body;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::Value;

use crate::jsonrpc::{ErrorCode, ErrorObject, JsonRpcMessage};
use crate::native::http::{
    bad_protocol_version, declared_too_large, empty, read_body, read_last_event_id,
    read_protocol_version, rpc_error, Accept, HttpOptions, ResponseBody, MCP_SESSION_HEADER,
};
use crate::native::stream::{sse_response, Detach};
use crate::protocol::negotiate_initialize;
use crate::session::{MintError, Session, SessionStore};

/// The layer: wraps an inner service that takes `Request<Full<Bytes>>` (the buffered body).
#[derive(Clone, Debug)]
pub struct SessionLayer {
    store: Arc<SessionStore>,
    options: Arc<HttpOptions>,
}

impl SessionLayer {
    /// A layer over `store`, owning `options.path` (which must be the inner route's path) and
    /// using its body limit and keep-alive interval.
    pub fn new(store: Arc<SessionStore>, options: HttpOptions) -> Self {
        SessionLayer {
            store,
            options: Arc::new(options),
        }
    }

    /// The session store.
    pub fn store(&self) -> &Arc<SessionStore> {
        &self.store
    }
}

impl<S> tower_layer::Layer<S> for SessionLayer {
    type Service = SessionService<S>;

    fn layer(&self, inner: S) -> SessionService<S> {
        SessionService {
            inner,
            store: self.store.clone(),
            options: self.options.clone(),
        }
    }
}

/// The service [`SessionLayer`] makes.
#[derive(Clone, Debug)]
pub struct SessionService<S> {
    inner: S,
    store: Arc<SessionStore>,
    options: Arc<HttpOptions>,
}

type Inner = Request<Full<Bytes>>;

impl<S> SessionService<S>
where
    S: tower_service::Service<Inner, Response = Response<ResponseBody>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send,
{
    /// The session store.
    pub fn store(&self) -> &Arc<SessionStore> {
        &self.store
    }

    /// Answer one request.
    pub async fn respond<B>(&self, request: Request<B>) -> Response<ResponseBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        if request.uri().path() != self.options.path {
            let (parts, _) = request.into_parts();
            return self
                .forward(Request::from_parts(parts, Full::new(Bytes::new())))
                .await;
        }
        match *request.method() {
            Method::POST => self.post(request).await,
            Method::GET => self.get(&request),
            Method::DELETE => self.delete(&request),
            _ => {
                let mut response = rpc_error(
                    StatusCode::METHOD_NOT_ALLOWED,
                    ErrorObject::new(ErrorCode::SERVER_ERROR, "Method not allowed"),
                );
                response
                    .headers_mut()
                    .insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
                response
            }
        }
    }

    async fn forward(&self, request: Inner) -> Response<ResponseBody> {
        let mut inner = self.inner.clone();
        if futures::future::poll_fn(|cx| inner.poll_ready(cx))
            .await
            .is_err()
        {
            return empty(StatusCode::SERVICE_UNAVAILABLE);
        }
        match inner.call(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        }
    }

    async fn post<B>(&self, request: Request<B>) -> Response<ResponseBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let (mut parts, body) = request.into_parts();
        if let Some(response) = declared_too_large(&parts.headers, self.options.max_body_bytes) {
            return response;
        }
        let body = match read_body(body, self.options.max_body_bytes).await {
            Ok(body) => body,
            Err(response) => return response,
        };
        if parts.headers.get(MCP_SESSION_HEADER).is_none() && is_modern(&parts.headers, &body) {
            // The 2026-07-28 wire has no sessions: straight to the route (SPEC-2026-07-28 §2.4).
            return self
                .forward(Request::from_parts(parts, Full::new(body)))
                .await;
        }
        let (session, minted) = match parts.headers.get(MCP_SESSION_HEADER) {
            Some(id) => match self.lookup(id) {
                Some(session) => (Some(session), false),
                // Modern traffic ignores a session id that names no live session (§2.4, §3.5).
                None if is_modern(&parts.headers, &body) => {
                    return self
                        .forward(Request::from_parts(parts, Full::new(body)))
                        .await;
                }
                None => return session_not_found(),
            },
            None => match initialize_version(&body) {
                Initialize::Valid(version) => match self.store.mint(version) {
                    Ok(session) => (Some(session), true),
                    Err(MintError::AtCapacity) => {
                        let mut response = rpc_error(
                            StatusCode::SERVICE_UNAVAILABLE,
                            ErrorObject::new(
                                ErrorCode::SERVER_ERROR,
                                "Service Unavailable: too many sessions",
                            ),
                        );
                        response
                            .headers_mut()
                            .insert(header::RETRY_AFTER, HeaderValue::from_static("60"));
                        return response;
                    }
                    Err(e) => {
                        tracing::error!(error = %e, "sessions: cannot mint an id");
                        return rpc_error(
                            StatusCode::INTERNAL_SERVER_ERROR,
                            ErrorObject::internal("cannot mint a session id"),
                        );
                    }
                },
                // The route answers the in-band -32602 (no session for a failed initialize).
                Initialize::Invalid => (None, false),
                Initialize::Other => {
                    return rpc_error(
                        StatusCode::BAD_REQUEST,
                        ErrorObject::new(
                            ErrorCode::INVALID_REQUEST,
                            "Bad Request: mcp-session-id header is required",
                        ),
                    )
                }
                Initialize::Malformed => (None, false),
            },
        };
        if let Some(session) = &session {
            parts.extensions.insert(session.clone());
        }
        let mut response = self
            .forward(Request::from_parts(parts, Full::new(body)))
            .await;
        if let Some(session) = session {
            if minted && !response.status().is_success() {
                self.store.remove(session.id());
            } else if let Ok(value) = HeaderValue::from_str(session.id()) {
                response.headers_mut().insert(MCP_SESSION_HEADER, value);
            }
        }
        response
    }

    fn get<B>(&self, request: &Request<B>) -> Response<ResponseBody> {
        if !Accept::parse(request.headers()).sse {
            return rpc_error(
                StatusCode::NOT_ACCEPTABLE,
                ErrorObject::new(
                    ErrorCode::INVALID_REQUEST,
                    "Not Acceptable: Accept must admit text/event-stream",
                ),
            );
        }
        let session = match self.require(request) {
            Ok(session) => session,
            Err(response) => return response,
        };
        let Some(attached) = session.resume(read_last_event_id(request.headers())) else {
            return session_not_found();
        };
        let detach = Detach {
            session: session.clone(),
            stream: attached.stream,
            token: attached.token,
        };
        let mut response = sse_response(attached.events, self.options.keep_alive, Some(detach));
        if let Ok(value) = HeaderValue::from_str(session.id()) {
            response.headers_mut().insert(MCP_SESSION_HEADER, value);
        }
        response
    }

    fn delete<B>(&self, request: &Request<B>) -> Response<ResponseBody> {
        let session = match self.require(request) {
            Ok(session) => session,
            Err(response) => return response,
        };
        self.store.remove(session.id());
        empty(StatusCode::NO_CONTENT)
    }

    /// The live session a `GET` / `DELETE` names, or the answer: `400` without the header or
    /// with a bad version header, `404` for an unknown id.
    #[allow(clippy::result_large_err)]
    fn require<B>(&self, request: &Request<B>) -> Result<Arc<Session>, Response<ResponseBody>> {
        if let Err(e) = read_protocol_version(request.headers()) {
            return Err(bad_protocol_version(e));
        }
        let Some(id) = request.headers().get(MCP_SESSION_HEADER) else {
            return Err(rpc_error(
                StatusCode::BAD_REQUEST,
                ErrorObject::new(
                    ErrorCode::INVALID_REQUEST,
                    "Bad Request: mcp-session-id header is required",
                ),
            ));
        };
        self.lookup(id).ok_or_else(session_not_found)
    }

    fn lookup(&self, id: &HeaderValue) -> Option<Arc<Session>> {
        self.store.get(id.to_str().ok()?)
    }
}

/// Whether a POST is modern traffic: a `MCP-Protocol-Version` outside the handshake era, or a
/// request whose body carries modern `_meta`.
fn is_modern(headers: &hyper::HeaderMap, body: &[u8]) -> bool {
    let header = headers
        .get(crate::native::http::MCP_PROTOCOL_VERSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::trim);
    if header.is_some_and(|v| !crate::era::is_legacy_version(v)) {
        return true;
    }
    matches!(
        JsonRpcMessage::from_slice(body),
        Ok(JsonRpcMessage::Request(r)) if crate::era::has_modern_meta(r.params.as_ref())
    )
}

enum Initialize {
    /// An `initialize` request with a negotiable version.
    Valid(&'static str),
    /// An `initialize` request whose params the server will refuse.
    Invalid,
    /// A well-formed message that is not an `initialize` request.
    Other,
    /// Not a message at all (the route answers its parse error).
    Malformed,
}

fn initialize_version(body: &[u8]) -> Initialize {
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return Initialize::Malformed;
    };
    match JsonRpcMessage::from_value(value) {
        Ok(JsonRpcMessage::Request(request)) if request.method == "initialize" => {
            match negotiate_initialize(request.params.as_ref()) {
                Ok(version) => Initialize::Valid(version),
                Err(_) => Initialize::Invalid,
            }
        }
        Ok(_) => Initialize::Other,
        Err(_) => Initialize::Malformed,
    }
}

/// The `404` for an unknown, ended or expired session (seed `rejectUnknownSession`).
pub fn reject_unknown_session() -> Response<ResponseBody> {
    session_not_found()
}

fn session_not_found() -> Response<ResponseBody> {
    rpc_error(
        StatusCode::NOT_FOUND,
        ErrorObject::new(ErrorCode::INVALID_REQUEST, "Session not found"),
    )
}

impl<S, B> tower_service::Service<Request<B>> for SessionService<S>
where
    S: tower_service::Service<Inner, Response = Response<ResponseBody>, Error = Infallible>
        + Clone
        + Send
        + Sync
        + 'static,
    S::Future: Send,
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
        let this = self.clone();
        Box::pin(async move { Ok(this.respond(request).await) })
    }
}

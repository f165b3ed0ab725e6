//! The whole MCP endpoint on one path and port: security checks, the WebSocket upgrade,
//! sessions with resumable `GET` streams, and the Streamable HTTP route — what
//! `orkestrel-mcp serve --http` serves.
//!
//! ```text
//! request ─► [CORS, opt-in: cors_layer] ─► Guard (Origin, Host) ─┬─► WebSocket upgrade (ws::handshake)
//!                                                                └─► the core's Route (with its session half, or stateless)
//! ```
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use orkestrel_mcp::native::endpoint::{Endpoint, EndpointOptions};
//! use orkestrel_mcp::native::shutdown::{serve_gracefully, DEFAULT_DRAIN};
//! use orkestrel_mcp::{McpServer, ServerOptions};
//!
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
//! let options = EndpointOptions::for_bind(listener.local_addr()?);
//! let endpoint = Endpoint::new(McpServer::new(ServerOptions::new("docs", "1.0.0")), options)
//!     .expect("valid options");
//! let service = endpoint.clone();
//! // On Ctrl-C: stop accepting, let calls in flight finish (at most the drain), then close
//! // WebSockets with 1001 and end SSE streams.
//! let signal = async {
//!     let _ = tokio::signal::ctrl_c().await;
//! };
//! serve_gracefully(listener, endpoint, service, signal, DEFAULT_DRAIN).await
//! # }
//! ```

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::task::{Context, Poll};

use hyper::body::Body;
use hyper::header::{self, HeaderName, HeaderValue};
use hyper::{Method, Request, Response};
use tokio::sync::watch;
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::http::negotiate::host_required;
use crate::http::route::Route;
use crate::http::session::{Clock, SessionBackend, SessionOptions, SessionStore};
use crate::native::http::{
    drive, response, tokio_spawner, wire_version, HttpOptions, Plan, ResponseBody,
};
use crate::native::security::{forbidden, Guard, InvalidOrigin, Origin, SecurityOptions};
use crate::native::ws::{self, Handshake, WebSocketOptions};
use crate::server::McpServer;

/// Options for [`Endpoint::new`].
#[derive(Clone)]
pub struct EndpointOptions {
    /// The HTTP route's options (path, body limit, keep-alive, …).
    pub http: HttpOptions,
    /// Sessions (default on); `None` serves the stateless route (`GET` / `DELETE` → `405`).
    pub sessions: Option<SessionOptions>,
    /// The WebSocket server on the same path (default on); `None` ignores upgrades.
    pub websocket: Option<WebSocketOptions>,
    /// `Origin` / `Host` checks.
    pub security: SecurityOptions,
    /// The clock sessions use, in ms (default: the system clock).
    pub clock: Option<Clock>,
    /// Require a bearer token on the MCP path (HTTP and the WebSocket upgrade) and serve the
    /// protected resource metadata ([`crate::http::auth`]); `None` (the default) requires none.
    pub auth: Option<crate::http::auth::Authorizer>,
}

impl std::fmt::Debug for EndpointOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EndpointOptions")
            .field("http", &self.http)
            .field("sessions", &self.sessions)
            .field("websocket", &self.websocket)
            .field("security", &self.security)
            .field("clock", &self.clock.is_some())
            .field("auth", &self.auth)
            .finish()
    }
}

impl Default for EndpointOptions {
    /// Sessions and WebSocket on, the loopback security policy.
    fn default() -> Self {
        EndpointOptions {
            http: HttpOptions::default(),
            sessions: Some(SessionOptions::default()),
            websocket: Some(WebSocketOptions::default()),
            security: SecurityOptions {
                loopback: true,
                ..SecurityOptions::default()
            },
            clock: None,
            auth: None,
        }
    }
}

impl EndpointOptions {
    /// The defaults for a server bound to `addr` (the loopback policy when it is loopback).
    pub fn for_bind(addr: SocketAddr) -> Self {
        let mut options = EndpointOptions::default();
        options.security.loopback = addr.ip().is_loopback();
        options
    }
}

/// The system clock in ms since the Unix epoch.
pub fn system_clock() -> Clock {
    crate::host::defaults::system_clock()
}

/// The endpoint service (a `tower::Service`, cheap to clone).
#[derive(Clone)]
pub struct Endpoint {
    server: McpServer,
    guard: Arc<Guard>,
    websocket: Option<Arc<WebSocketOptions>>,
    /// The core's plan: the route, with the session half when sessions are on.
    route: Route,
    keep_alive: Option<std::time::Duration>,
    store: Option<Arc<SessionStore>>,
    /// The session backend the route uses (the in-memory `store`, or a shared one).
    backend: Option<Arc<dyn SessionBackend>>,
    shutdown: Arc<watch::Sender<bool>>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("server", &self.server)
            .field("sessions", &self.backend)
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// Build the endpoint.
    ///
    /// # Errors
    /// [`InvalidOrigin`] when an allowlist entry does not parse.
    pub fn new(server: McpServer, options: EndpointOptions) -> Result<Endpoint, InvalidOrigin> {
        let store = options.sessions.clone().map(|sessions| {
            let clock = options.clock.clone().unwrap_or_else(system_clock);
            let store = Arc::new(SessionStore::new(sessions, clock));
            let ended = server.clone();
            store.set_on_end(Arc::new(move |id| ended.end_scope(id)));
            store
        });
        let backend = store.clone().map(|s| s as Arc<dyn SessionBackend>);
        Endpoint::build(server, options, store, backend)
    }

    /// Build the endpoint with sessions kept by `backend` (a store several server instances
    /// share, such as `native::redis::RedisSessions` with the `redis` feature) instead of the
    /// in-memory store; `options.sessions` and `options.clock` are then the backend's business.
    ///
    /// # Errors
    /// [`InvalidOrigin`] when an allowlist entry does not parse.
    pub fn with_session_backend(
        server: McpServer,
        options: EndpointOptions,
        backend: Arc<dyn SessionBackend>,
    ) -> Result<Endpoint, InvalidOrigin> {
        Endpoint::build(server, options, None, Some(backend))
    }

    fn build(
        server: McpServer,
        options: EndpointOptions,
        store: Option<Arc<SessionStore>>,
        backend: Option<Arc<dyn SessionBackend>>,
    ) -> Result<Endpoint, InvalidOrigin> {
        let guard = Arc::new(Guard::new(&options.security)?);
        let mut route = Route::new(
            server.clone(),
            options.http.route_options(),
            tokio_spawner(),
        );
        if let Some(backend) = &backend {
            route = route.with_sessions(backend.clone());
        }
        if let Some(auth) = options.auth {
            route = route.with_auth(auth);
        }
        Ok(Endpoint {
            server,
            guard,
            websocket: options.websocket.map(Arc::new),
            route,
            keep_alive: options.http.keep_alive,
            store,
            backend,
            shutdown: Arc::new(watch::channel(false).0),
        })
    }

    /// The in-memory session store (`None` when stateless or when a shared backend keeps the
    /// sessions: see [`Endpoint::session_backend`]).
    pub fn sessions(&self) -> Option<&Arc<SessionStore>> {
        self.store.as_ref()
    }

    /// The session backend the route uses (`None` when stateless).
    pub fn session_backend(&self) -> Option<&Arc<dyn SessionBackend>> {
        self.backend.as_ref()
    }

    /// Begin a server shutdown: every SSE connection with no request in flight (the `GET`
    /// streams) gets a `retry` field and ends (sessions stay, so clients can resume elsewhere or
    /// later), a request's SSE stream ends with its answer, every open `subscriptions/listen`
    /// stream is answered and ends ([`McpServer::end_subscriptions`]), and every WebSocket
    /// drains (its calls in flight get their answers, at most [`WebSocketOptions::drain`]) then
    /// gets close `1001`. [`Endpoint::end_streams`] ends what is still open after the drain.
    /// [`serve_gracefully`](crate::native::shutdown::serve_gracefully) calls both.
    pub fn shutdown(&self) {
        self.shutdown.send_replace(true);
        self.server.end_subscriptions(None);
        if let Some(backend) = &self.backend {
            backend.disconnect_idle();
        }
    }

    /// End every SSE connection still open with a `retry` field (the drain is over; sessions
    /// stay, so clients can resume elsewhere or later).
    pub fn end_streams(&self) {
        if let Some(backend) = &self.backend {
            backend.disconnect_all();
        }
    }

    /// Resolves once no WebSocket connection of this endpoint is open (each holds the shutdown
    /// signal until its task ends).
    pub async fn websockets_closed(&self) {
        self.shutdown.closed().await;
    }

    /// Answer one request.
    pub async fn respond<B>(&self, request: Request<B>) -> Response<ResponseBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        if let Some(refused) = self.refuse_head(&request) {
            return refused;
        }
        if let Some(options) = &self.websocket {
            match ws::handshake(&request, options) {
                Handshake::NotWebSocket => {}
                Handshake::Refuse(response) => return response,
                Handshake::Accept => {
                    // The upgrade is gated as a POST would be (a browser cannot send the header
                    // on a WebSocket, so a gated WebSocket is for native clients).
                    let mut request = request;
                    if self.route.auth().is_some() {
                        let mut head = crate::native::http::describe_head(&request);
                        if let Some(answer) = self.route.authorize(&mut head).await {
                            return response(answer, None);
                        }
                        if let Some(identity) = head.identity {
                            request.extensions_mut().insert(identity);
                        }
                    }
                    return ws::upgrade(
                        self.server.clone(),
                        request,
                        options,
                        self.shutdown.subscribe(),
                    );
                }
            }
        }
        drive(&self.route, self.keep_alive, request, Plan::Whole).await
    }
}

impl Endpoint {
    /// The checks every request (the WebSocket upgrade too) passes first: an `HTTP/1.1` request
    /// without `Host` → `400` (the core's [`host_required`]), then the `Origin` / `Host` guard
    /// over the target's authority and the header fields → `403`. `None` when it passes —
    /// for a host serving its own paths beside the endpoint (a gateway's `/status`) under the
    /// same DNS-rebinding protection.
    pub fn refuse_head<B>(&self, request: &Request<B>) -> Option<Response<ResponseBody>> {
        let version = wire_version(request.extensions(), request.version());
        if let Some(answer) = host_required(version, request.headers()) {
            return Some(response(answer, None));
        }
        let authority = request.uri().authority().map(|a| a.as_str());
        match self.guard.check_request(authority, request.headers()) {
            Ok(()) => None,
            Err(refusal) => {
                tracing::debug!(?refusal, "http: refused");
                Some(forbidden(&refusal))
            }
        }
    }
}

impl<B> tower_service::Service<Request<B>> for Endpoint
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
        let this = self.clone();
        Box::pin(async move { Ok(this.respond(request).await) })
    }
}

/// An opt-in CORS layer (tower-http) for browser clients of `origins` (exact origins such as
/// `https://app.example.com`), built from the lists in [`crate::http::headers`]: it allows the
/// methods [`CORS_ALLOW_METHODS`](crate::http::headers::CORS_ALLOW_METHODS) (`GET`, `POST`,
/// `DELETE`, `OPTIONS`) and the request headers
/// [`CORS_ALLOW_HEADERS`](crate::http::headers::CORS_ALLOW_HEADERS) (`Content-Type`, `Accept`,
/// `Authorization`, `Mcp-Session-Id`, `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`,
/// `Last-Event-ID`) plus every `Mcp-Param-{Name}` header, and exposes
/// [`CORS_EXPOSE_HEADERS`](crate::http::headers::CORS_EXPOSE_HEADERS) (`Mcp-Session-Id`,
/// `MCP-Protocol-Version`, `WWW-Authenticate`) to the page's script — what a browser needs for
/// both eras of [Streamable HTTP](https://modelcontextprotocol.io/specification/2025-11-25/basic/transports)
/// and the [2026-07-28 headers](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http).
///
/// `Mcp-Param-*` has no fixed names, so a preflight is answered by mirroring its
/// `Access-Control-Request-Headers` — and only when every header named there passes
/// [`is_cors_allowed_header`](crate::http::headers::is_cors_allowed_header). A preflight that
/// asks for any other header (or whose list is not text) gets no `Access-Control-Allow-Origin`,
/// so the browser refuses the request it was asking about. Other requests are answered as
/// before: an origin in `origins` gets `Access-Control-Allow-Origin` and the exposed headers.
///
/// Wrap the [`Endpoint`] in it (`tower::Layer::layer`), and put the same origins in
/// [`SecurityOptions::allowed_origins`] so the guard lets them through.
///
/// # Errors
/// [`InvalidOrigin`] for an origin that does not parse.
pub fn cors_layer(origins: &[String]) -> Result<CorsLayer, InvalidOrigin> {
    use crate::http::headers::{is_cors_allowed_header, CORS_ALLOW_METHODS, CORS_EXPOSE_HEADERS};
    use tower_http::cors::{AllowHeaders, ExposeHeaders};

    let mut values = Vec::with_capacity(origins.len());
    for origin in origins {
        Origin::parse(origin)?;
        let value = HeaderValue::from_str(origin.trim_end_matches('/'))
            .map_err(|_| InvalidOrigin(origin.clone()))?;
        values.push(value);
    }
    // A preflight's `Access-Control-Request-Headers`: every name it lists must be allowed.
    let requested_are_allowed = |parts: &hyper::http::request::Parts| {
        parts
            .headers
            .get_all(header::ACCESS_CONTROL_REQUEST_HEADERS)
            .iter()
            .all(|value| {
                value.to_str().is_ok_and(|list| {
                    list.split(',')
                        .map(str::trim)
                        .filter(|name| !name.is_empty())
                        .all(is_cors_allowed_header)
                })
            })
    };
    let methods = CORS_ALLOW_METHODS
        .iter()
        .filter_map(|m| Method::from_bytes(m.as_bytes()).ok())
        .collect::<Vec<_>>();
    // The core's names are lowercase tokens: `from_static` accepts them.
    let exposed = CORS_EXPOSE_HEADERS
        .iter()
        .copied()
        .map(HeaderName::from_static)
        .collect::<Vec<_>>();
    Ok(CorsLayer::new()
        .allow_origin(AllowOrigin::predicate(move |origin, parts| {
            values.contains(origin)
                && (parts.method != Method::OPTIONS || requested_are_allowed(parts))
        }))
        .allow_methods(methods)
        .allow_headers(AllowHeaders::mirror_request())
        .expose_headers(ExposeHeaders::list(exposed)))
}

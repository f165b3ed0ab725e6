//! The session layer on hyper (seed `createMCPSession`, clauses 18 and 19; spec
//! `basic/transports`, Session Management and Resumability:
//! <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>): a `tower` layer
//! in front of the session-agnostic [`Routes`](crate::native::http::Routes) that makes its path
//! stateful. A thin driver of the core's session half ([`crate::http::sessions`], where the
//! table is): a `POST` the core admits goes to the inner service with its [`Session`](crate::http::session::Session) as a
//! request extension (`Arc<Session>`), its answer then carrying `mcp-session-id`; other paths go
//! to the inner service unchanged.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Body;
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};

use crate::http::answer::Answer;
use crate::http::negotiate::{body_bytes, declared_too_large};
use crate::http::session::SessionBackend;
use crate::http::sessions::{Admit, Sessions};
use crate::native::http::{empty, read_body, response, HttpOptions, ResponseBody};

/// The layer: wraps an inner service that takes `Request<Full<Bytes>>` (the buffered body).
#[derive(Clone, Debug)]
pub struct SessionLayer {
    store: Arc<dyn SessionBackend>,
    options: Arc<HttpOptions>,
}

impl SessionLayer {
    /// A layer over `store`, owning `options.path` (which must be the inner route's path) and
    /// using its body limit and keep-alive interval (an `Arc<SessionStore>` for the in-memory
    /// default).
    pub fn new(store: Arc<dyn SessionBackend>, options: HttpOptions) -> Self {
        SessionLayer {
            store,
            options: Arc::new(options),
        }
    }

    /// The session store.
    pub fn store(&self) -> &Arc<dyn SessionBackend> {
        &self.store
    }
}

impl<S> tower_layer::Layer<S> for SessionLayer {
    type Service = SessionService<S>;

    fn layer(&self, inner: S) -> SessionService<S> {
        SessionService {
            inner,
            sessions: Sessions::new(self.store.clone()),
            options: self.options.clone(),
        }
    }
}

/// The service [`SessionLayer`] makes.
#[derive(Clone, Debug)]
pub struct SessionService<S> {
    inner: S,
    sessions: Sessions,
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
    pub fn store(&self) -> &Arc<dyn SessionBackend> {
        self.sessions.store()
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
        let version = crate::native::http::wire_version(request.extensions(), request.version());
        if let Some(answer) = crate::http::negotiate::host_required(version, request.headers()) {
            return response(answer, None);
        }
        let answer = match *request.method() {
            Method::POST => return self.post(request).await,
            Method::GET => self.sessions.get(request.headers()).await,
            Method::DELETE => self.sessions.delete(request.headers()).await,
            _ => Sessions::method_not_allowed(),
        };
        response(answer, self.options.keep_alive)
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
        let limit = self.options.max_body_bytes;
        let (mut parts, body) = request.into_parts();
        if let Some(answer) = declared_too_large(&parts.headers, limit) {
            return response(answer, None);
        }
        let body = match body_bytes(read_body(body, limit).await, limit) {
            Ok(body) => body,
            Err(answer) => return response(answer, None),
        };
        let admitted = match self.sessions.post(&parts.headers, &body).await {
            Admit::Answer(answer) => return response(answer, self.options.keep_alive),
            Admit::Route(admitted) => admitted,
        };
        if let Some(session) = &admitted.session {
            parts.extensions.insert(session.clone());
        }
        let mut response = self
            .forward(Request::from_parts(parts, Full::new(Bytes::from(body))))
            .await;
        let success = response.status().is_success();
        if let Some(id) = self.sessions.settle(&admitted, success).await {
            if let Ok(value) = HeaderValue::from_str(&id) {
                response.headers_mut().insert(
                    HeaderName::from_static(crate::http::headers::MCP_SESSION_ID),
                    value,
                );
            }
        }
        response
    }
}

/// The `404` for an unknown, ended or expired session (seed `rejectUnknownSession`).
pub fn reject_unknown_session() -> Response<ResponseBody> {
    response(Answer::session_not_found(), None)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::session::{SessionOptions, SessionStore};
    use crate::native::http::Routes;
    use crate::{McpServer, ServerOptions};
    use http_body_util::BodyExt;
    use tower_layer::Layer;

    const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    const PING: &str = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;

    fn post(body: &'static str, session: Option<&str>, accept: &str) -> Request<Full<Bytes>> {
        let mut request = Request::builder()
            .method(Method::POST)
            .uri("/mcp")
            .header("content-type", "application/json")
            .header("accept", accept);
        if let Some(id) = session {
            request = request.header("mcp-session-id", id);
        }
        request
            .body(Full::new(Bytes::from_static(body.as_bytes())))
            .unwrap()
    }

    /// Behind the layer, the route answers a request in the session the layer admitted it to
    /// (its head negotiated in that session once): SSE with event ids on a primed stream, and a
    /// head the route refuses is refused.
    #[tokio::test]
    async fn the_route_behind_the_layer_answers_in_the_admitted_session() {
        let server = McpServer::new(ServerOptions::new("layered", "1"));
        let store = Arc::new(SessionStore::new(SessionOptions::default(), Arc::new(|| 0)));
        let service = SessionLayer::new(store, HttpOptions::default())
            .layer(Routes::new(server, HttpOptions::default()));
        let both = "application/json, text/event-stream";
        let initialized = service.respond(post(INITIALIZE, None, both)).await;
        assert_eq!(initialized.status(), StatusCode::OK);
        let id = initialized.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let pinged = service.respond(post(PING, Some(&id), both)).await;
        assert_eq!(pinged.status(), StatusCode::OK);
        assert_eq!(pinged.headers()["mcp-session-id"], id.as_str());
        let body = pinged.into_body().collect().await.unwrap().to_bytes();
        let body = String::from_utf8(body.to_vec()).unwrap();
        // The priming event, then the response, each with an id.
        assert_eq!(body.matches("id: ").count(), 2, "{body}");
        assert!(body.contains(r#""id":2"#), "{body}");
        let refused = service.respond(post(PING, Some(&id), "text/html")).await;
        assert_eq!(refused.status(), StatusCode::NOT_ACCEPTABLE);
    }

    /// A JSON-RPC batch is never routed without a session, though the route behind the layer
    /// is stateless (where it would run one sent with no version header); in a session that
    /// negotiated 2025-03-26 it runs.
    #[tokio::test]
    async fn a_batch_without_a_session_is_refused_before_the_stateless_route_behind() {
        let server = McpServer::new(ServerOptions::new("layered", "1"));
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let c = calls.clone();
        server.on_request(move |_, _| {
            c.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        });
        let store = Arc::new(SessionStore::new(SessionOptions::default(), Arc::new(|| 0)));
        let service = SessionLayer::new(store, HttpOptions::default())
            .layer(Routes::new(server, HttpOptions::default()));
        let json = "application/json";
        let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]"#;
        let text = |response: Response<ResponseBody>| async move {
            let body = response.into_body().collect().await.unwrap().to_bytes();
            String::from_utf8(body.to_vec()).unwrap()
        };
        let refused = service.respond(post(batch, None, json)).await;
        assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
        assert!(text(refused)
            .await
            .contains("mcp-session-id header is required"));
        let with_init = concat!(
            r#"[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","#,
            r#""capabilities":{},"clientInfo":{"name":"t","version":"0"}}}]"#
        );
        let refused = service.respond(post(with_init, None, json)).await;
        assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
        assert!(text(refused).await.contains("initialize must not be part"));
        assert_eq!(
            calls.load(std::sync::atomic::Ordering::SeqCst),
            0,
            "nothing ran"
        );
        let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
        let initialized = service.respond(post(init, None, json)).await;
        let id = initialized.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let answered = service.respond(post(batch, Some(&id), json)).await;
        assert_eq!(answered.status(), StatusCode::OK);
        let body: serde_json::Value = serde_json::from_str(&text(answered).await).unwrap();
        assert_eq!(body[0]["id"], 1);
        assert_eq!(body[1]["result"]["tools"], serde_json::json!([]));
    }
}

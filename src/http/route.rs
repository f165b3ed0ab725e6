//! The server route of Streamable HTTP as a no-I/O plan (spec `basic/transports`:
//! <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>; the 2026-07-28
//! wire: <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>
//! and SEP-2243, <https://modelcontextprotocol.io/seps/2243-http-standardization>).
//!
//! A host drives it in two steps, so that a request the head already refuses is answered before
//! its body is read: [`Route::head`] checks the method, path and header fields and names the
//! body limit ([`Head::ReadBody`]); the host reads the body (with its own read timeout), puts it
//! in an [`HttpRequest`] and [`Route::respond`] answers. The plan never spawns or reads a clock
//! itself: dispatch that feeds an event stream runs on the injected [`Spawn`], and keep-alive
//! comments are the host's timer.
//!
//! | request | answer |
//! |---|---|
//! | `POST {path}`, a request | `200`, the response as JSON, or as SSE when the client accepts `text/event-stream` (notifications the handler sends come first on that stream; a handshake-era stream's head goes out at once, before its first event); a 2026-07-28 request whose response comes before any notification gets JSON with its status ([`status_of`]) |
//! | `POST`, a request answered with JSON and cancelled by `notifications/cancelled` (on its session) | `200`, `-32800` "Request cancelled" with its id: the `POST` still gets one JSON object (on an SSE stream a cancelled request gets nothing) |
//! | `POST`, a notification or a response | `202`, no body; under an `MCP-Protocol-Version` no era speaks, `400` `-32022` |
//! | `POST`, an `id`-less object that is no JSON-RPC message (`method` not a string, no or another `jsonrpc`) | `400`, `-32600`, id `null`: not accepted, though no JSON-RPC answer is due (a notification whose only fault is `params`: `202`, dropped) |
//! | `POST`, malformed JSON or an empty body | `400`, `-32700`, id `null` |
//! | `POST`, not a valid message (bad envelope; a batch where batches are refused, below) | `400`, `-32600` (or `-32602` for non-object `params`) |
//! | `POST`, a JSON-RPC batch (an array) | see the batch table below |
//! | `POST`, body over the limit (default 4 MiB), declared or read | `413`, `-32600` |
//! | `POST`, body not sent within the host's read timeout | `408`, `-32600` |
//! | `POST`, `Content-Type` absent or not `application/json` | `415`, `-32600` (an absent type is refused too: a browser may send a body without one cross-origin and without a CORS preflight, so requiring JSON keeps cross-site requests behind the preflight) |
//! | `POST`, `Content-Type` naming a `charset` other than UTF-8, given twice with different values, or a `Content-Encoding` other than `identity` (e.g. `gzip`) | `415`, `-32600`, the message naming it (the body would be misread as UTF-8 JSON: RFC 8259 section 8.1, RFC 9110 section 8.4) |
//! | `POST`, `MCP-Protocol-Version` unsupported | `400`, `-32600` |
//! | any verb, `Mcp-Session-Id`, `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` or an `Mcp-Param-*` repeated with different values | `400`, `-32600`, id `null`, the message naming the header ([`conflicting_fields`]; identical repeats are one value) |
//! | an `HTTP/1.1` request without `Host` (when the host tells the version: [`Route::head_of`]) | `400`, `-32600` (RFC 9112 §3.2) |
//! | `POST`, 2026-07-28 request failing header validation (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`) | `400`, `-32020` / `-32022` / `-32602` |
//! | `POST`, `Accept` admits neither JSON nor SSE | `406`, `-32600` |
//! | `GET` / `DELETE` / other verbs on `{path}`, no sessions | `405` with `Allow: POST`, `-32000` |
//! | any other path | `404`, plain text |
//!
//! With a session store ([`Route::with_sessions`]) the session half ([`crate::http::sessions`])
//! answers first: minting on `initialize`, `400` / `404` / `503`, `GET` streams resumed by
//! `Last-Event-ID`, `DELETE`. A request in a session gets SSE on a session stream (a priming
//! event for 2025-11-25 clients, every event with an id, resumable), gives tools the session
//! through their [`RequestContext`], and assumes the session's negotiated protocol version when
//! the header is absent (else `2025-03-26`, spec Protocol Version Header).
//!
//! A JSON-RPC batch is received only where the `POST` speaks 2025-03-26 — its session
//! negotiated it, or, without a session, its `MCP-Protocol-Version` names it or is absent (a
//! server without the header assumes 2025-03-26) — the one revision whose
//! [transport](https://modelcontextprotocol.io/specification/2025-03-26/basic/transports#sending-messages-to-the-server)
//! lets a body be "an array batching one or more requests and/or notifications" or responses.
//! Each element follows `server::batch`'s rules (an `initialize` refuses the whole batch; an
//! invalid element, a duplicate id, a 2026-07-28 request get their error in the reply):
//!
//! | `POST` body | answer |
//! |---|---|
//! | a batch, at any other revision (a session at 2024-11-05, 2025-06-18, 2025-11-25; such a header; a 2026-07-28 header) | `400`, `-32600` "batches are not supported", as before |
//! | `[]`, more than [`MAX_BATCH_LEN`](crate::wire::jsonrpc::MAX_BATCH_LEN) elements, an `initialize` in it | `400`, one `-32600` id `null`; nothing runs |
//! | a batch without a session where the route has sessions | `400` "mcp-session-id header is required" (only `initialize` mints one, and it cannot be batched) |
//! | only notifications and responses | run in order, then `202`, no body |
//! | requests (or invalid elements), JSON negotiated | `200 application/json`: one array of the responses, in the batch's order, once all are answered (a cancelled request has no entry; none left: `202`) |
//! | requests, SSE negotiated | `200 text/event-stream`: each response its own event as it comes (after the notifications of its request), the errors first; the stream ends after the last. In a session, one resumable session stream |
//! | a request needing a tool scope the token lacks | `403` for the whole batch, before any of it runs |
//!
//! One batch runs at most [`MAX_BATCH_IN_FLIGHT`] (256) requests; its requests beyond are answered
//! `-32000` "too many requests in flight" in the reply, as a stream connection's are.

use std::sync::Arc;

use futures::channel::{mpsc, oneshot};
use futures::future::{self, Either};
use futures::{FutureExt, StreamExt};

use crate::era::{self, Era};
use crate::http::answer::{Answer, EventStream};
use crate::http::headers;
use crate::http::identity::Identity;
use crate::http::negotiate::{
    accept, body_bytes, conflicting_fields, declared_too_large, host_required,
    protocol_version_header, protocol_version_header_str, unsupported_media, BadProtocolVersion,
};
use crate::http::request::{Body, Fields, HttpRequest, HttpVersion};
use crate::http::session::{Session, SessionBackend, Taken};
use crate::http::sessions::{Admit, Attachment, Sessions};
use crate::protocol::receives_batches;
use crate::server::batch::{self, Element, Run};
use crate::server::context::RequestContext;
use crate::server::McpServer;
use crate::wire::jsonrpc::{
    ErrorCode, ErrorObject, InvalidMessage, JsonRpcBatch, JsonRpcBatchResponse, JsonRpcMessage,
    JsonRpcRequest, JsonRpcResponse,
};
use crate::wire::sse::{self, encode_event};

/// Runs a background future to completion: `tokio::spawn` on native, `spawn_local` on wasm (the
/// one spawner type of the crate, [`crate::host::Spawn`]).
pub use crate::host::Spawn;

/// The `Allow` of the stateless path.
pub const ALLOW_POST: &str = "POST";

/// What the route is configured with.
#[derive(Clone, Debug)]
pub struct RouteOptions {
    /// The path (default `/mcp`).
    pub path: String,
    /// Whether an SSE reply is allowed (default `true`).
    pub streaming: bool,
    /// When the client accepts both JSON and SSE, answer JSON (default `false`: SSE, as the seed).
    pub prefer_json: bool,
    /// The request body limit in bytes (default 4 MiB); a larger body gets `413`.
    pub max_body_bytes: usize,
}

impl Default for RouteOptions {
    fn default() -> Self {
        RouteOptions {
            path: headers::DEFAULT_MCP_PATH.to_owned(),
            streaming: true,
            prefer_json: false,
            max_body_bytes: headers::DEFAULT_MAX_BODY_BYTES,
        }
    }
}

/// What [`Route::head`] decided from the method, path and header fields.
#[derive(Debug)]
pub enum Head {
    /// Answer this now; do not read the body.
    Answer(Answer),
    /// Read the body, at most `limit` bytes (more: [`Body::TooLarge`]), then [`Route::respond`].
    ReadBody {
        /// The body limit in bytes.
        limit: usize,
    },
    /// No body is needed (`GET`, `DELETE`): [`Route::respond`] with an empty one.
    NoBody,
}

/// The route plan: an [`McpServer`] at a path, optionally with sessions. Cheap to clone.
#[derive(Clone)]
pub struct Route {
    server: McpServer,
    options: Arc<RouteOptions>,
    sessions: Option<Sessions>,
    spawn: Spawn,
    auth: Option<crate::http::auth::Authorizer>,
}

impl std::fmt::Debug for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Route")
            .field("server", &self.server)
            .field("options", &self.options)
            .field("sessions", &self.sessions)
            .finish_non_exhaustive()
    }
}

/// What the head of a stateless `POST` negotiated.
struct Negotiated {
    /// Whether the `MCP-Protocol-Version` header names a version outside the handshake era.
    modern_header: bool,
    /// The handshake-era version the request speaks.
    protocol_version: String,
    /// Whether to answer on an event stream.
    sse: bool,
}

/// A request's head as the route reads it, borrowed from wherever the host keeps it: an
/// [`HttpRequest`]'s own fields, or (native) hyper's request parts, whose header map is read in
/// place through [`Fields`] rather than copied per request.
pub(crate) struct RequestHead<'a, H: Fields + ?Sized> {
    /// The method, as sent.
    pub method: &'a str,
    /// The path of the request target.
    pub path: &'a str,
    /// The header fields.
    pub fields: &'a H,
    /// The HTTP version as read from the wire (`None`: not judged).
    pub version: Option<HttpVersion>,
}

impl<'a> RequestHead<'a, Vec<(String, Option<String>)>> {
    /// The head of a described request.
    fn of(request: &'a HttpRequest) -> Self {
        RequestHead {
            method: &request.method,
            path: &request.path,
            fields: &request.headers,
            version: request.version,
        }
    }
}

/// What [`Route::head_checked`] established about a request's head, handed to
/// [`Route::respond_checked`] so that answering the request does not read the same fields again
/// (the default: nothing established, every check made).
#[derive(Default)]
pub(crate) struct Checked {
    /// The path, `Host` ([`host_required`]), single-value fields ([`conflicting_fields`]) and
    /// declared length ([`declared_too_large`]) passed.
    common: bool,
    /// The route's own negotiation of a `POST` (the route alone: stateless, or in a session a
    /// layer in front admitted).
    negotiated: Option<Negotiated>,
}

/// The session a request runs in, told by type where the caller knows there is none: the
/// route's code is instantiated per slot, and the [`Stateless`] instance holds none of the
/// session paths (attaching pushes, session streams, the session's revision), so a host that
/// never installs the session half (the wasm Worker handler, [`Route::respond_stateless`]) links
/// none of that code.
pub(crate) trait SessionSlot {
    /// Whether the slot never holds a session (a constant, so that the session paths fold away
    /// where it is `true`: [`live`]).
    const STATELESS: bool = false;

    /// The session, if any.
    fn session(self) -> Option<Arc<Session>>;

    /// The slot of the same kind holding `session` (which [`Stateless`] drops: it never has one).
    fn of(session: Option<Arc<Session>>) -> Self;
}

impl SessionSlot for Option<Arc<Session>> {
    #[inline(always)]
    fn session(self) -> Option<Arc<Session>> {
        self
    }

    #[inline(always)]
    fn of(session: Option<Arc<Session>>) -> Self {
        session
    }
}

/// No session: the request is answered statelessly.
pub(crate) struct Stateless;

impl SessionSlot for Stateless {
    const STATELESS: bool = true;

    #[inline(always)]
    fn session(self) -> Option<Arc<Session>> {
        None
    }

    #[inline(always)]
    fn of(_: Option<Arc<Session>>) -> Self {
        Stateless
    }
}

/// `session`, unless slot `S` never holds one: decided by a constant at each use, where the
/// compiler drops the session paths of the [`Stateless`] instance (the session itself may be
/// kept in the future's state across an await, where that is no longer seen).
#[inline(always)]
fn live<S: SessionSlot>(session: &Option<Arc<Session>>) -> Option<&Arc<Session>> {
    if S::STATELESS {
        None
    } else {
        session.as_ref()
    }
}

impl Route {
    /// The stateless route of `server` with `options`; event streams' dispatch runs on `spawn`.
    pub fn new(server: McpServer, options: RouteOptions, spawn: Spawn) -> Self {
        Route {
            server,
            options: Arc::new(options),
            sessions: None,
            spawn,
            auth: None,
        }
    }

    /// The same route with the session half over `store` in front (an `Arc<SessionStore>` for
    /// the in-memory default, or any [`SessionBackend`]).
    pub fn with_sessions(mut self, store: Arc<dyn SessionBackend>) -> Self {
        self.sessions = Some(Sessions::new(store));
        self
    }

    /// Require a bearer token on the MCP path and serve the protected resource metadata
    /// ([`crate::http::auth`]); the hosts call [`Route::authorize`] first.
    pub fn with_auth(mut self, auth: crate::http::auth::Authorizer) -> Self {
        self.auth = Some(auth);
        self
    }

    /// The scopes the tool a `tools/call` names requires (none for another method).
    fn tool_scopes(&self, request: &JsonRpcRequest) -> Vec<String> {
        let name = (request.method == "tools/call")
            .then(|| request.params.as_ref()?.get("name")?.as_str())
            .flatten();
        name.and_then(|n| self.server.tools().get(n))
            .map(|t| t.required_scopes().to_vec())
            .unwrap_or_default()
    }

    /// The bearer-token gate, when there is one.
    pub fn auth(&self) -> Option<&crate::http::auth::Authorizer> {
        self.auth.as_ref()
    }

    /// The gate's decision on `request` (before its body is read): `None` to go on — with the
    /// verified identity set on the request — or the answer (the metadata document, `401`,
    /// `403`, `503`). No gate, or a path that is neither the MCP path nor the metadata's:
    /// `None`.
    pub async fn authorize(&self, request: &mut HttpRequest) -> Option<Answer> {
        let auth = self.auth.as_ref()?;
        if request.path != self.options.path && !auth.is_metadata_path(&request.path) {
            return None;
        }
        // A CORS preflight carries no credentials (Fetch standard): not gated.
        if request.method == "OPTIONS" {
            return None;
        }
        match auth.check(request).await {
            crate::http::auth::Gate::Pass(identity) => {
                request.identity = Some(identity);
                None
            }
            crate::http::auth::Gate::Answer(answer) => Some(answer),
        }
    }

    /// Whether a request of `identity` may use `session`: one bound to an authorization context
    /// (its `initialize` carried a token) only by that context; another user's request answers
    /// as for an unknown session (spec, Security Best Practices, Session Hijacking: bind session
    /// ids to user-specific information, so a leaked id alone does not hand over the session).
    fn admits(&self, session: &Session, identity: Option<&Identity>) -> bool {
        self.server.scope_admits(&session.scope(), identity)
    }

    /// The options.
    pub fn options(&self) -> &RouteOptions {
        &self.options
    }

    /// The session store, when the route has sessions.
    pub fn sessions(&self) -> Option<&Arc<dyn SessionBackend>> {
        self.sessions.as_ref().map(Sessions::store)
    }

    /// The server.
    pub fn server(&self) -> &McpServer {
        &self.server
    }

    /// Check a request's head: the answer now, or how to read its body.
    pub fn head<H: Fields + ?Sized>(&self, method: &str, path: &str, fields: &H) -> Head {
        let head = RequestHead {
            method,
            path,
            fields,
            version: None,
        };
        self.head_checked(&head, None).0
    }

    /// [`Route::head`] of a described request whose body is not read yet (the host fills
    /// [`HttpRequest::body`] afterwards): first what every request line must satisfy (an
    /// `HTTP/1.1` request without `Host` → `400`, [`host_required`]), then [`Route::head`] —
    /// or, for a request a layer in front already admitted to `session`, [`Route::head_in`].
    pub fn head_of(&self, request: &HttpRequest, session: Option<&Arc<Session>>) -> Head {
        self.head_checked(&RequestHead::of(request), session).0
    }

    /// [`Route::head_of`] over a borrowed head, with what it established for
    /// [`Route::respond_checked`] (which then skips those checks).
    pub(crate) fn head_checked<H: Fields + ?Sized>(
        &self,
        head: &RequestHead<'_, H>,
        session: Option<&Arc<Session>>,
    ) -> (Head, Checked) {
        if let Some(answer) = host_required(head.version, head.fields) {
            return (Head::Answer(answer), Checked::default());
        }
        if self.sessions.is_none() || session.is_some() {
            return self.head_route(head.method, head.path, head.fields, session);
        }
        if head.path != self.options.path {
            return (Head::Answer(Answer::not_found()), Checked::default());
        }
        if let Some(answer) = conflicting_fields(head.fields) {
            return (Head::Answer(answer), Checked::default());
        }
        let decided = match head.method {
            // A body whose media type is refused is not read first (the 415 the route's own
            // negotiation gives, in its order: before the declared length's 413).
            "POST" => match unsupported_media(head.fields)
                .or_else(|| self.declared_too_large(head.fields))
            {
                Some(answer) => Head::Answer(answer),
                None => Head::ReadBody {
                    limit: self.options.max_body_bytes,
                },
            },
            "GET" | "DELETE" => Head::NoBody,
            _ => Head::Answer(Sessions::method_not_allowed()),
        };
        let checked = Checked {
            common: true,
            negotiated: None,
        };
        (decided, checked)
    }

    /// [`Route::head`] of the route alone (no session half), for a request already in
    /// `session` — what a host that runs the session half as a separate layer calls.
    pub fn head_in<H: Fields + ?Sized>(
        &self,
        method: &str,
        path: &str,
        fields: &H,
        session: Option<&Arc<Session>>,
    ) -> Head {
        self.head_route(method, path, fields, session).0
    }

    fn head_route<H: Fields + ?Sized>(
        &self,
        method: &str,
        path: &str,
        fields: &H,
        session: Option<&Arc<Session>>,
    ) -> (Head, Checked) {
        if path != self.options.path {
            return (Head::Answer(Answer::not_found()), Checked::default());
        }
        match self.negotiate(method, fields, session, false) {
            Ok(negotiated) => (
                Head::ReadBody {
                    limit: self.options.max_body_bytes,
                },
                Checked {
                    common: true,
                    negotiated: Some(negotiated),
                },
            ),
            Err(answer) => (Head::Answer(answer), Checked::default()),
        }
    }

    /// Answer one request (the whole plan: the session half when configured, then the route).
    pub async fn respond(&self, request: HttpRequest) -> Answer {
        let HttpRequest {
            method,
            path,
            headers,
            body,
            version,
            identity,
            ..
        } = request;
        let head = RequestHead {
            method: &method,
            path: &path,
            fields: &headers,
            version,
        };
        self.respond_checked(&head, body, identity, Checked::default())
            .await
    }

    /// [`Route::respond`] of a request whose head is borrowed and whose head checks
    /// ([`Route::head_checked`]) established `checked`.
    pub(crate) async fn respond_checked<H: Fields + ?Sized>(
        &self,
        head: &RequestHead<'_, H>,
        body: Body,
        identity: Option<Arc<Identity>>,
        checked: Checked,
    ) -> Answer {
        let Some(sessions) = &self.sessions else {
            return self
                .respond_in_checked(head, body, identity, Stateless, checked)
                .await;
        };
        if !checked.common {
            if head.path != self.options.path {
                return Answer::not_found();
            }
            if let Some(answer) = host_required(head.version, head.fields) {
                return answer;
            }
            if let Some(answer) = conflicting_fields(head.fields) {
                return answer;
            }
        }
        let allowed = |session: &Session| self.admits(session, identity.as_deref());
        match head.method {
            "POST" => {}
            "GET" => return sessions.get_if(head.fields, allowed).await,
            "DELETE" => return sessions.delete_if(head.fields, allowed).await,
            _ => return Sessions::method_not_allowed(),
        }
        if !checked.common {
            // The head's order ([`Route::head_checked`]): a refused media type, then the
            // declared length, before the body and the session.
            if let Some(answer) =
                unsupported_media(head.fields).or_else(|| self.declared_too_large(head.fields))
            {
                return answer;
            }
        }
        let body = match body_bytes(body, self.options.max_body_bytes) {
            Ok(body) => body,
            Err(answer) => return answer,
        };
        // The single-value fields were checked above (or at the head): admitted without again.
        let admitted = match sessions.admit(head.fields, &body, allowed).await {
            Admit::Answer(answer) => return answer,
            Admit::Route(admitted) => admitted,
        };
        // The path, `Host`, single-value fields and declared length passed; the negotiation
        // waits for the session (its protocol version is the default one).
        let checked = Checked {
            common: true,
            negotiated: None,
        };
        let session = admitted.session.clone();
        let mut answer = self
            .respond_in_checked(head, Body::Bytes(body), identity, session, checked)
            .await;
        if let Some(id) = sessions.settle(&admitted, answer.is_success()).await {
            answer.headers.push((headers::MCP_SESSION_ID, id.into()));
        }
        answer
    }

    /// Answer one request with the route alone (no session half), in `session` when the request
    /// was admitted to one.
    pub async fn respond_in(&self, request: HttpRequest, session: Option<Arc<Session>>) -> Answer {
        self.respond_in_slot(request, session).await
    }

    /// [`Route::respond`] of a route without the session half, as the host of one calls it: the
    /// same answers, from the route's [`Stateless`] instance (no session code; see
    /// [`SessionSlot`]). Not for a route built [`with_sessions`](Route::with_sessions): its
    /// requests go through [`Route::respond`].
    #[cfg_attr(
        not(all(
            target_family = "wasm",
            any(feature = "js-server", not(feature = "js-client"))
        )),
        allow(dead_code)
    )]
    pub(crate) async fn respond_stateless(&self, request: HttpRequest) -> Answer {
        self.respond_in_slot(request, Stateless).await
    }

    /// [`Route::respond_in`] in the session `slot` holds.
    async fn respond_in_slot<S: SessionSlot>(&self, request: HttpRequest, slot: S) -> Answer {
        let HttpRequest {
            method,
            path,
            headers,
            body,
            version,
            identity,
            ..
        } = request;
        let head = RequestHead {
            method: &method,
            path: &path,
            fields: &headers,
            version,
        };
        self.respond_in_checked(&head, body, identity, slot, Checked::default())
            .await
    }

    /// [`Route::respond_in`] of a request whose head is borrowed and whose head checks
    /// established `checked`, in the session `slot` holds.
    pub(crate) async fn respond_in_checked<H: Fields + ?Sized, S: SessionSlot>(
        &self,
        head: &RequestHead<'_, H>,
        body: Body,
        identity: Option<Arc<Identity>>,
        slot: S,
        checked: Checked,
    ) -> Answer {
        let session = slot.session();
        if !checked.common {
            if head.path != self.options.path {
                return Answer::not_found();
            }
            if let Some(answer) = host_required(head.version, head.fields) {
                return answer;
            }
        }
        let negotiated = match checked.negotiated {
            Some(negotiated) => negotiated,
            None => {
                match self.negotiate(
                    head.method,
                    head.fields,
                    live::<S>(&session),
                    checked.common,
                ) {
                    Ok(negotiated) => negotiated,
                    Err(answer) => return answer,
                }
            }
        };
        let fields = head.fields;
        let body = match body_bytes(body, self.options.max_body_bytes) {
            Ok(body) => body,
            Err(answer) => return answer,
        };
        let message = match JsonRpcMessage::from_slice(&body) {
            Ok(message) => message,
            Err(invalid) if invalid.is_batch() => {
                // Boxed, as the dispatch below: a batch's state stays out of this future.
                return Box::pin(self.batch(&body, &invalid, negotiated, S::of(session), identity))
                    .await;
            }
            Err(invalid) => {
                // An id-less object that is no JSON-RPC message is answered too (`-32600`, id
                // `null`: `400`, the transport does not accept it); a notification whose only
                // fault is its `params` is taken (`202`) and dropped.
                return match invalid.response() {
                    Some(response) => Answer::json(400, &response),
                    None => {
                        tracing::debug!(error = %invalid, "http: dropped a malformed notification");
                        Answer::empty(202)
                    }
                };
            }
        };
        let mut ctx = RequestContext::new().with_identity(identity);
        // A notification or response under a version no era speaks: `400`, as a request under
        // it gets (spec `basic/transports`, Protocol Version Header: an unsupported version MUST
        // get 400), not taken.
        if negotiated.modern_header && !matches!(message, JsonRpcMessage::Request(_)) {
            if let Some(version) = protocol_version_header_str(fields)
                .ok()
                .flatten()
                .filter(|v| !era::MODERN_PROTOCOL_VERSIONS.contains(v))
            {
                let error = era::unsupported_version(version);
                return Answer::json(400, &JsonRpcResponse::error(None, error));
            }
        }
        let request = match message {
            JsonRpcMessage::Request(request) => request,
            other => {
                if let Some(session) = live::<S>(&session) {
                    ctx = ctx
                        .with_session(session.clone())
                        .with_scope(session.scope());
                }
                // Boxed, as below: the dispatch's state stays out of this future.
                Box::pin(self.server.dispatch_with(other, ctx)).await;
                return Answer::empty(202);
            }
        };
        // A tool's own scopes: `403 insufficient_scope` before it runs (RFC 6750 §3.1).
        if let (Some(auth), Some(identity)) = (&self.auth, &ctx.identity) {
            if let Some(answer) = auth.check_scopes(identity, &self.tool_scopes(&request)) {
                return answer;
            }
        }
        // Classify by shape (the 2026-07-28 transport): modern `_meta`, or a header naming a version outside the
        // handshake era, takes the modern validation path; a live session stays legacy.
        let modern = live::<S>(&session).is_none()
            && (negotiated.modern_header || era::has_modern_meta(request.params.as_ref()));
        // A session's `initialize` opens its scope and records its answer on the session
        // (`Session::record_initialize`).
        let initialize = request.method == "initialize";
        if modern {
            // Read again on this path only (it passed the negotiation, so it reads the same).
            let version = protocol_version_header(fields).ok().flatten();
            if let Err(error) = self.validate_modern(fields, version.as_deref(), &request) {
                return Answer::json(400, &JsonRpcResponse::error(Some(request.id), error));
            }
            ctx.era = Era::Modern;
            ctx.protocol_version.clone_from(&version);
            ctx.transport_version = version;
        } else {
            ctx.protocol_version = Some(negotiated.protocol_version);
            ctx.stateless = self.sessions.is_none();
            if let Some(session) = live::<S>(&session) {
                if initialize && session.initialized() {
                    // A repeat handshake would answer a version the session does not speak:
                    // a new one starts without `Mcp-Session-Id`.
                    return Answer::json(
                        400,
                        &JsonRpcResponse::error(
                            Some(request.id),
                            ErrorObject::invalid_request(
                                "this session is already initialized: an initialize without \
                                 Mcp-Session-Id starts a new session",
                            ),
                        ),
                    );
                }
                ctx = ctx
                    .with_session(session.clone())
                    .with_scope(session.scope());
                if initialize {
                    // Pushes not tied to a request (list changes, resource updates, requests of
                    // tools answered by JSON) go on the session's GET stream. The scope is keyed
                    // by the session's own id text (no copy).
                    let push = session.clone();
                    self.server.attach(
                        &session.scope(),
                        Arc::new(move |m| push.push(&m.to_json()).is_some()),
                    );
                }
            }
        }
        if negotiated.sse {
            let message = JsonRpcMessage::Request(request);
            // An ended session has no stream to open: the request is answered on a stream of
            // its own.
            if let Some((session, opened)) =
                live::<S>(&session).and_then(|s| Some((s, s.open_request_buffer()?)))
            {
                return self.session_stream(session, opened, message, ctx, initialize);
            }
            return self.stream(message, ctx).await;
        }
        if let Some(session) = live::<S>(&session) {
            // No stream of its own: the request's messages go on the session's stream.
            let session = session.clone();
            ctx = ctx.with_outbound(Arc::new(move |m| session.push(&m.to_json()).is_some()));
        }
        let id = request.id.clone();
        let message = JsonRpcMessage::Request(request);
        // Boxed: the dispatch's state (several KiB) would otherwise be part of this future
        // on every path, and a host boxes and moves this future for every request.
        match Box::pin(self.server.dispatch_with(message, ctx)).await {
            Some(response) => {
                if let Some(session) = live::<S>(&session).filter(|_| initialize) {
                    session.record_initialize(!response.is_error());
                }
                Answer::json(status_of(modern, &response), &response)
            }
            // Cancelled (`notifications/cancelled` on its session): the transport owes a
            // request's `POST` one JSON object (`202` is for notifications and responses), so
            // it is `-32800` with the id, which the client that cancelled ignores.
            None => Answer::json(
                200,
                &JsonRpcResponse::error(
                    Some(id),
                    ErrorObject::new(ErrorCode::REQUEST_CANCELLED, "Request cancelled"),
                ),
            ),
        }
    }

    /// The head checks of a `POST`, in order: verb `405`, single-value MCP fields repeated with
    /// different values `400`, `Content-Type` `415`, version `400`, `Accept` `406`, declared
    /// length `413`.
    ///
    /// With `common_checked`, the single-value fields and the declared length have passed
    /// already (the same fields, at the head) and are not read again.
    fn negotiate<H: Fields + ?Sized>(
        &self,
        method: &str,
        fields: &H,
        session: Option<&Arc<Session>>,
        common_checked: bool,
    ) -> Result<Negotiated, Answer> {
        if method != "POST" {
            return Err(Answer::method_not_allowed(
                ALLOW_POST,
                "Method not allowed: this endpoint serves POST only",
            ));
        }
        if !common_checked {
            if let Some(answer) = conflicting_fields(fields) {
                return Err(answer);
            }
        }
        if let Some(answer) = unsupported_media(fields) {
            return Err(answer);
        }
        // A version outside the handshake era takes the modern path (2026-07-28 transport), whose
        // validation answers it; a handshake-era one is checked here (spec basic/transports).
        let header_version =
            protocol_version_header_str(fields).map_err(|e| Answer::rpc_error(400, e))?;
        let modern_header = header_version.is_some_and(|v| !era::is_legacy_version(v));
        // The same value, read once: on the handshake path it must be a revision spoken here
        // (`read_protocol_version_str`'s rule; a conflict was refused just above).
        let legacy_header = match header_version {
            Some(v) if session.is_some() || !modern_header => {
                if !crate::protocol::is_supported_version(v) {
                    return Err(BadProtocolVersion::Unsupported(v.to_owned()).answer());
                }
                Some(v)
            }
            _ => None,
        };
        let protocol_version = legacy_header
            .unwrap_or_else(|| {
                session.map_or(headers::DEFAULT_HTTP_PROTOCOL_VERSION, |s| {
                    s.protocol_version()
                })
            })
            .to_owned();
        let accept = accept(fields);
        let sse = match (accept.json, accept.sse && self.options.streaming) {
            (false, false) => {
                return Err(Answer::rpc_error(
                    406,
                    ErrorObject::invalid_request(
                        "Accept must admit application/json or text/event-stream",
                    ),
                ))
            }
            (true, true) => !self.options.prefer_json,
            (json, _) => !json,
        };
        if !common_checked {
            if let Some(answer) = self.declared_too_large(fields) {
                return Err(answer);
            }
        }
        Ok(Negotiated {
            modern_header,
            protocol_version,
            sse,
        })
    }

    fn declared_too_large<H: Fields + ?Sized>(&self, fields: &H) -> Option<Answer> {
        declared_too_large(fields, self.options.max_body_bytes)
    }

    /// The modern checks that need headers, in the order of the 2026-07-28 transport: the
    /// `MCP-Protocol-Version` header (`-32020`), `_meta` (`-32602`), header vs. body version
    /// (`-32020`), the version (`-32022`), then `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*` (`-32020`).
    fn validate_modern<H: Fields + ?Sized>(
        &self,
        fields: &H,
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
        let lookup = |name: &str| fields.field(name).map(str::to_owned);
        era::validate_headers(&lookup, request, schema.as_ref())
    }

    /// Answer a request as a stream: the handler's notifications as SSE events, then the
    /// response. When the response comes before any notification, a modern request gets it as
    /// JSON with its proper status and a handshake-era one as a single SSE event. Dropping the
    /// stream cancels the dispatch (2026-07-28 transport: closing the stream cancels the
    /// request).
    async fn stream(&self, message: JsonRpcMessage, ctx: RequestContext) -> Answer {
        let modern = ctx.era == Era::Modern;
        let (tx, mut rx) = mpsc::unbounded::<Out>();
        let out = tx.clone();
        let ctx = ctx.with_outbound(Arc::new(move |m| {
            out.unbounded_send(Out::Message(m.to_json())).is_ok()
        }));
        let server = self.server.clone();
        let mut dispatch: crate::BoxFuture<'static, Option<JsonRpcResponse>> =
            Box::pin(async move { server.dispatch_with(message, ctx).await });
        // Polled once in place: a dispatch done at its first poll (a `ping`, a tool that does
        // not wait) needs no task, no cancellation and no channel for its response; its
        // notifications so far are queued. Only one that waits is spawned.
        let cancelled = match poll_once(&mut dispatch) {
            Ok(Some(response)) => {
                // Its context (and the sender in it) is gone with it, unless a tool kept it:
                // what that sends after the response is not part of this reply.
                drop(dispatch);
                return ready_reply(modern, rx, response);
            }
            Ok(None) => {
                let (mut cancel, cancelled) = oneshot::channel::<()>();
                (self.spawn)(Box::pin(async move {
                    match future::select(dispatch, cancel.cancellation()).await {
                        Either::Left((Some(response), _)) => {
                            let _ = tx.unbounded_send(Out::Final(response));
                        }
                        Either::Left((None, _)) => {}
                        Either::Right(_) => {
                            tracing::debug!("http: response stream closed; request cancelled");
                        }
                    }
                    // Close for every sender: a tool may keep its context (and so a sender)
                    // alive.
                    tx.close_channel();
                }));
                if !modern {
                    // A handshake-era reply is `200 text/event-stream` whatever comes: its head
                    // goes out now, so a client's read timeout does not run out under a tool
                    // that is slow to send anything (a 2026-07-28 one waits for its first
                    // message, whose kind picks JSON with a status or the stream).
                    return events_of(None, rx, cancelled);
                }
                cancelled
            }
            // A handler's panic is its request's `-32603` (the server's dispatch); a panic
            // outside it in this first poll ends the dispatch, as a panicking task would: its
            // senders are gone, so the stream below ends after what it had sent.
            Err(_) => {
                tracing::error!("http: a dispatch panicked; the request gets no answer");
                drop((dispatch, tx));
                oneshot::channel::<()>().1
            }
        };
        // Only a 2026-07-28 dispatch that waits gets here (a handshake-era one was answered as a
        // stream when spawned), or one that panicked outside its handler.
        let first = match rx.next().await {
            None => return Answer::empty(202),
            Some(Out::Final(response)) => {
                return Answer::json(status_of(modern, &response), &response)
            }
            Some(first) => first,
        };
        events_of(Some(first), rx, cancelled)
    }

    /// Answer a request on a session request stream opened with a buffer for its connection
    /// (`opened`: its stream and token, [`Session::open_request_buffer`]): priming,
    /// notifications and the response, each with an event id, so a dropped connection is
    /// resumed by `GET` with `Last-Event-ID`. The request keeps running when the client goes.
    ///
    /// The dispatch is polled once here, its events collected in the buffer: one done at once (a
    /// tool that does not wait) has finished its stream by then, and its events are the whole
    /// reply (one body, no channel); one that waits is spawned and its events so far go first on
    /// the channel that takes the buffer's place.
    fn session_stream(
        &self,
        session: &Arc<Session>,
        (stream, token): (u64, u64),
        message: JsonRpcMessage,
        ctx: RequestContext,
        handshake: bool,
    ) -> Answer {
        let notify = session.clone();
        let ctx = ctx.with_stream(stream).with_outbound(Arc::new(move |m| {
            notify.send_owned(stream, m.to_json()).is_some()
        }));
        let server = self.server.clone();
        let task_session = session.clone();
        let dispatch = Box::pin(async move {
            // The stream ends whatever becomes of the dispatch (done, or dropped by a panic
            // outside the handler: the server turns a handler's panic into its `-32603`).
            let finish = Finish {
                session: task_session,
                stream,
            };
            if let Some(response) = server.dispatch_with(message, ctx).await {
                if handshake {
                    finish.session.record_initialize(!response.is_error());
                }
                finish.session.send_owned(stream, response.to_json());
            }
        });
        self.session_events(session, (stream, token), dispatch)
    }

    /// The answer on session request stream `opened` (its stream and token) fed by `dispatch`,
    /// which finishes the stream when it is over: polled once here, its events collected in the
    /// stream's buffer, and spawned only if it waits (see [`Route::session_stream`]).
    fn session_events(
        &self,
        session: &Arc<Session>,
        (stream, token): (u64, u64),
        dispatch: crate::BoxFuture<'static, ()>,
    ) -> Answer {
        self.poll_once_or_spawn(
            dispatch,
            "http: a session dispatch panicked; its stream ends",
        );
        match session.take_request_buffer(stream, token) {
            Taken::Ended(events) => Answer::events(EventStream::ended(events)),
            Taken::Live(attached) => {
                let events =
                    Attachment::new(session.clone(), stream, attached.token, attached.events);
                Answer::events(EventStream::new(events))
            }
        }
    }

    /// Answer a `POST` whose body is a JSON-RPC batch (`refusal`: the single-message parser's
    /// answer to it, what a peer that does not speak 2025-03-26 gets). See the module's batch
    /// table; the element rules are `server::batch`'s.
    async fn batch<S: SessionSlot>(
        &self,
        body: &[u8],
        refusal: &InvalidMessage,
        negotiated: Negotiated,
        slot: S,
        identity: Option<Arc<Identity>>,
    ) -> Answer {
        let session = slot.session();
        // The revision the POST speaks: its header's, else its session's, else (no header, no
        // session) 2025-03-26; a session negotiated at another revision refuses whatever the
        // header says.
        let receives = !negotiated.modern_header
            && receives_batches(&negotiated.protocol_version)
            && live::<S>(&session).is_none_or(|s| receives_batches(s.protocol_version()));
        if !receives {
            return match refusal.response() {
                Some(response) => Answer::json(400, &response),
                None => Answer::empty(202),
            };
        }
        let screened = match JsonRpcBatch::from_slice(body).map(batch::screen) {
            Ok(Ok(screened)) => screened,
            Ok(Err(error)) => return Answer::rpc_error(400, error),
            Err(invalid) => {
                return match invalid.response() {
                    Some(response) => Answer::json(400, &response),
                    None => Answer::empty(202),
                }
            }
        };
        if self.sessions.is_some() && live::<S>(&session).is_none() {
            // With sessions only an `initialize` comes without one, and it is never in a batch
            // (the session half refuses such a batch first: `sessionless_batch`).
            return Answer::session_required();
        }
        // A tool's own scopes: `403 insufficient_scope` for the whole batch, before any of it
        // runs (RFC 6750 §3.1), as for a single request.
        if let (Some(auth), Some(identity)) = (&self.auth, &identity) {
            for element in &screened.elements {
                if let Element::Request(request) = element {
                    if let Some(answer) = auth.check_scopes(identity, &self.tool_scopes(request)) {
                        return answer;
                    }
                }
            }
        }
        // The requests beyond the most one batch runs are answered at once.
        let mut messages = Vec::with_capacity(screened.elements.len());
        let mut answered = Vec::new();
        let mut requests = 0;
        for (at, element) in screened.elements.into_iter().enumerate() {
            match element {
                Element::Answered(response) => answered.push((at, response)),
                Element::Request(request) if requests >= MAX_BATCH_IN_FLIGHT => {
                    answered.push((at, batch::too_many(request.id)));
                }
                Element::Request(request) => {
                    requests += 1;
                    messages.push((at, JsonRpcMessage::Request(request)));
                }
                Element::Other(message) => messages.push((at, message)),
            }
        }
        let mut ctx = RequestContext::new().with_identity(identity);
        ctx.protocol_version = Some(negotiated.protocol_version);
        ctx.stateless = self.sessions.is_none();
        match live::<S>(&session) {
            Some(session) => {
                ctx = ctx
                    .with_session(session.clone())
                    .with_scope(session.scope());
            }
            // A name of the batch's own, so a `notifications/cancelled` in it finds the
            // request it names (no other batch or session can name the same).
            None => ctx.batch = Some(stateless_batch_name()),
        }
        if requests == 0 && answered.is_empty() {
            // Only notifications and responses: run, in order; `202`, no body.
            let mut run = Run::new(self.members(messages, &ctx));
            while run.next().await.is_some() {}
            return Answer::empty(202);
        }
        if negotiated.sse {
            if let Some((session, opened)) =
                live::<S>(&session).and_then(|s| Some((s, s.open_request_buffer()?)))
            {
                return self.session_batch_stream(session, opened, messages, answered, ctx);
            }
            return self.batch_stream(messages, answered, ctx).await;
        }
        if let Some(session) = live::<S>(&session) {
            // No stream of its own: the requests' messages go on the session's stream.
            let session = session.clone();
            ctx = ctx.with_outbound(Arc::new(move |m| session.push(&m.to_json()).is_some()));
        }
        let mut replies = answered;
        let mut run = Run::new(self.members(messages, &ctx));
        while let Some((at, response)) = run.next().await {
            if let Some(response) = response {
                replies.push((at, response));
            }
        }
        replies.sort_unstable_by_key(|(at, _)| *at);
        match JsonRpcBatchResponse::new(replies.into_iter().map(|(_, r)| r).collect()) {
            Some(reply) => Answer::json_batch(200, &reply),
            // Every request was cancelled: nothing to answer.
            None => Answer::empty(202),
        }
    }

    /// The dispatch of each message of a batch on `ctx`, with its position.
    fn members(
        &self,
        messages: Vec<(usize, JsonRpcMessage)>,
        ctx: &RequestContext,
    ) -> Vec<(usize, crate::BoxFuture<'static, Option<JsonRpcResponse>>)> {
        messages
            .into_iter()
            .map(|(at, message)| {
                let server = self.server.clone();
                let ctx = ctx.clone();
                let member: crate::BoxFuture<'static, Option<JsonRpcResponse>> =
                    Box::pin(async move { server.dispatch_with(message, ctx).await });
                (at, member)
            })
            .collect()
    }

    /// A stateless batch answered as one event stream: the errors answered at once, then the
    /// requests' notifications and each response as its own event as it comes; the stream
    /// ends after the last. Dropping it cancels what still runs.
    async fn batch_stream(
        &self,
        messages: Vec<(usize, JsonRpcMessage)>,
        answered: Vec<(usize, JsonRpcResponse)>,
        ctx: RequestContext,
    ) -> Answer {
        let (tx, mut rx) = mpsc::unbounded::<Out>();
        let out = tx.clone();
        let ctx = ctx.with_outbound(Arc::new(move |m| {
            out.unbounded_send(Out::Message(m.to_json())).is_ok()
        }));
        let members = self.members(messages, &ctx);
        let (mut cancel, cancelled) = oneshot::channel::<()>();
        let dispatch = Box::pin(async move {
            for (_, response) in answered {
                let _ = tx.unbounded_send(Out::Message(response.to_json()));
            }
            let sent = &tx;
            let run = std::pin::pin!(async move {
                let mut run = Run::new(members);
                while let Some((_, response)) = run.next().await {
                    if let Some(response) = response {
                        let _ = sent.unbounded_send(Out::Message(response.to_json()));
                    }
                }
            });
            if let Either::Right(_) = future::select(run, cancel.cancellation()).await {
                tracing::debug!("http: response stream closed; batch cancelled");
            }
            // Close for every sender: a tool may keep its context (and so a sender) alive.
            tx.close_channel();
        });
        self.poll_once_or_spawn(dispatch, "http: a batch panicked; its stream ends");
        match rx.next().await {
            None => Answer::empty(202),
            Some(first) => events_of(Some(first), rx, cancelled),
        }
    }

    /// A batch in a session answered on one session request stream (`opened`): the errors
    /// answered at once, then the requests' notifications and each response as its own event,
    /// each with an event id (resumable by `GET` with `Last-Event-ID`); the stream ends after
    /// the last. The requests keep running when the client goes.
    fn session_batch_stream(
        &self,
        session: &Arc<Session>,
        (stream, token): (u64, u64),
        messages: Vec<(usize, JsonRpcMessage)>,
        answered: Vec<(usize, JsonRpcResponse)>,
        ctx: RequestContext,
    ) -> Answer {
        let notify = session.clone();
        let ctx = ctx.with_stream(stream).with_outbound(Arc::new(move |m| {
            notify.send_owned(stream, m.to_json()).is_some()
        }));
        let members = self.members(messages, &ctx);
        let task_session = session.clone();
        let dispatch = Box::pin(async move {
            // The stream ends whatever becomes of the batch (done, or dropped by a panic).
            let finish = Finish {
                session: task_session,
                stream,
            };
            for (_, response) in answered {
                finish.session.send_owned(stream, response.to_json());
            }
            let mut run = Run::new(members);
            while let Some((_, response)) = run.next().await {
                if let Some(response) = response {
                    finish.session.send_owned(stream, response.to_json());
                }
            }
        });
        self.session_events(session, (stream, token), dispatch)
    }
}

/// The most requests one batch `POST` runs: a connection's default in-flight limit
/// ([`crate::server::connection::DEFAULT_MAX_IN_FLIGHT`], 256). Its requests beyond are
/// answered `-32000` "too many requests in flight" in the reply, as a stream connection's are.
pub const MAX_BATCH_IN_FLIGHT: usize = crate::server::connection::DEFAULT_MAX_IN_FLIGHT;

impl Route {
    /// Poll a request's dispatch once in place and spawn it only if it waits (one done at once,
    /// a `ping` or a tool that does not wait, needs no task). A panic outside the handler (the
    /// server answers a handler's own with `-32603`) drops the dispatch, as a panicking task
    /// would, and is logged as `panicked`.
    fn poll_once_or_spawn(&self, mut dispatch: crate::BoxFuture<'static, ()>, panicked: &str) {
        match poll_once(&mut dispatch) {
            Ok(Some(())) => {}
            Ok(None) => (self.spawn)(dispatch),
            Err(_) => tracing::error!("{panicked}"),
        }
    }
}

/// Poll `dispatch` once in place: `Ok(Some(output))` when it is done, `Ok(None)` when it waits,
/// `Err(())` when it panicked outside the handler (the server answers a handler's own panic with
/// `-32603`); the caller then drops it, as a panicking task would be.
fn poll_once<T>(dispatch: &mut crate::BoxFuture<'static, T>) -> Result<Option<T>, ()> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dispatch.now_or_never())).map_err(drop)
}

/// Finishes a session's request stream when dropped (the dispatch that owns it is over).
struct Finish {
    session: Arc<Session>,
    stream: u64,
}

impl Drop for Finish {
    fn drop(&mut self) {
        self.session.finish(self.stream);
    }
}

/// The `text/event-stream` answer of a stateless request's (or batch's) dispatch: `first` (if
/// already received), then what `rx` receives, until a response [`Out::Final`] or the end of the channel. Dropping it
/// (the client went away) fires `cancelled`'s other end, cancelling the dispatch.
fn events_of(
    first: Option<Out>,
    rx: mpsc::UnboundedReceiver<Out>,
    cancelled: oneshot::Receiver<()>,
) -> Answer {
    let events = futures::stream::unfold(
        (first, Some(rx), cancelled),
        |(first, rx, cancelled)| async move {
            let mut rx = rx?;
            let next = match first {
                Some(out) => out,
                None => rx.next().await?,
            };
            Some(match next {
                Out::Message(json) => (encode_event(None, &json), (None, Some(rx), cancelled)),
                Out::Final(response) => (
                    sse::encode_response_event(&response),
                    (None, None, cancelled),
                ),
            })
        },
    );
    Answer::events(EventStream::new(events)).with_header(headers::X_ACCEL_BUFFERING, "no")
}

/// The answer of a stateless request whose dispatch was done at its first poll (`response`,
/// `None` for a notification's), after the notifications it queued in `rx`: none, and a modern
/// request gets its response as JSON; otherwise each is an event, then the response's, all
/// known at once ([`EventStream::ended`]), so with no `X-Accel-Buffering` (only a stream that
/// waits asks a proxy not to buffer it). Nothing at all is `202`.
fn ready_reply(
    modern: bool,
    mut rx: mpsc::UnboundedReceiver<Out>,
    response: Option<JsonRpcResponse>,
) -> Answer {
    let mut events = Vec::new();
    // Only what was queued: a sender a tool kept is still open, and what it sends later is
    // after the response.
    while let Ok(out) = rx.try_recv() {
        if let Out::Message(json) = out {
            events.push(encode_event(None, &json));
        }
    }
    let events = match (response, events.is_empty()) {
        (None, true) => return Answer::empty(202),
        (Some(response), true) if modern => {
            return Answer::json(status_of(true, &response), &response)
        }
        (Some(response), true) => EventStream::one(sse::encode_response_event(&response)),
        (response, false) => {
            events.extend(response.map(|r| sse::encode_response_event(&r)));
            EventStream::ended(events)
        }
    };
    Answer::events(events)
}

/// What a request's dispatch sends to its event stream.
enum Out {
    /// A notification or server→client request, as JSON.
    Message(String),
    /// The response; the stream ends after it.
    Final(JsonRpcResponse),
}

/// The HTTP status of a dispatch result: `200`, except on the 2026-07-28 wire, where
/// `-32020`, `-32021`, `-32022` get `400` and `-32601` gets `404`
/// (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>).
pub fn status_of(modern: bool, response: &JsonRpcResponse) -> u16 {
    match (&response.payload, modern) {
        (Err(e), true)
            if [
                era::HEADER_MISMATCH,
                era::MISSING_REQUIRED_CLIENT_CAPABILITY,
                era::UNSUPPORTED_PROTOCOL_VERSION,
            ]
            .contains(&e.code) =>
        {
            400
        }
        (Err(e), true) if e.code == ErrorCode::METHOD_NOT_FOUND => 404,
        _ => 200,
    }
}

/// A name no other stateless batch or session has (`batch-N`; session ids are hex).
fn stateless_batch_name() -> Arc<str> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Arc::from(format!("batch-{n}"))
}

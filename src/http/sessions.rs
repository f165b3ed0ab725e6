//! The session half of the route plan (seed `createMCPSession`, clauses 18 and 19; spec
//! `basic/transports`, Session Management and Resumability and Redelivery:
//! <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>), over the core's
//! a [`SessionBackend`] (the in-memory [`SessionStore`](crate::http::session::SessionStore) by default, or a store several server
//! instances share):
//!
//! | request on `{path}` | answer |
//! |---|---|
//! | `POST` `initialize` (valid params), no `mcp-session-id` | a session is minted; the route answers, and a successful (`2xx`) answer carries `mcp-session-id` (any other answer, or an `initialize` the server answers with a JSON-RPC error, forgets the session: the id comes with the `InitializeResult`) |
//! | `POST` `initialize` with the id of a session already initialized here | `400`, `-32600` with its id, "already initialized" (a repeat handshake would answer a version the session does not speak); the session goes on |
//! | any verb with the id of a session whose `initialize` (one that waited, so its id went out) was then answered with an error | `404`, `-32600`: the session ends |
//! | `POST` `initialize`, no header, at the session cap | `503` with `Retry-After`, `-32000` with the request's id (see [`SessionStore::mint`](crate::http::session::SessionStore::mint) for why it refuses rather than evicting) |
//! | `POST` anything else, no header | `400`, `-32600` (malformed JSON is left to the route: `400`, `-32700`; so is a JSON-RPC batch, which the route refuses: `400`, "mcp-session-id header is required", or why it is refused whole — an `initialize` in it) |
//! | `POST` 2026-07-28 traffic (no header, or an id naming no live session) | the route answers, statelessly (that wire has no sessions) |
//! | any verb with an unknown, ended or expired id | `404`, `-32600` "Session not found" |
//! | any verb with the id of a session whose `initialize` carried a bearer token, by a token of another user ([`Identity::context`](crate::http::identity::Identity::context)) | `404`, as an unknown id; the session goes on (spec, Security Best Practices, Session Hijacking) |
//! | any verb whose session the store cannot look up or mint ([`Unavailable`], a shared store unreachable) | `503` with `Retry-After`, `-32000` |
//! | `POST` with a live id | the route answers with the session attached |
//! | `GET`, `Accept` admits `text/event-stream`, live id | `200 text/event-stream`: the replay after `Last-Event-ID`, then live events; see [`Session::resume`] |
//! | `GET` whose `Accept` does not admit SSE | `406` |
//! | `GET` / `DELETE` without the header | `400` |
//! | `DELETE`, live id | `204`: the session ends, its streams close; the id then answers `404` |
//! | `GET` / `DELETE` with an unsupported `MCP-Protocol-Version` | `400` |
//! | other verbs | `405` with `Allow: GET, POST, DELETE` |
//! | any verb with `Mcp-Session-Id` (or another single-value MCP field) repeated with different values | `400`, `-32600`, naming the header ([`crate::http::negotiate::conflicting_fields`]): no "first wins" |

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::Stream;

use crate::era;
use crate::http::answer::{Answer, EventStream};
use crate::http::headers;
use crate::http::negotiate::{
    accept, conflicting_fields, read_protocol_version, read_protocol_version_str,
};
use crate::http::request::Fields;
use crate::http::session::{
    EventId, EventReceiver, MintError, Session, SessionBackend, Unavailable,
};
use crate::protocol::{negotiate_initialize, receives_batches};
use crate::server::batch;
use crate::wire::jsonrpc::{
    ErrorCode, ErrorObject, JsonRpcBatch, JsonRpcMessage, JsonRpcResponse, RequestId,
};

/// The `Allow` of the session-aware path.
pub const ALLOW_SESSION_METHODS: &str = "GET, POST, DELETE";

/// The session half: decides, for one request, which session it belongs to (or the answer that
/// refuses it). Cheap to clone.
#[derive(Clone, Debug)]
pub struct Sessions {
    store: Arc<dyn SessionBackend>,
}

/// What [`Sessions::post`] decided.
#[derive(Debug)]
pub enum Admit {
    /// Answer this instead of routing the request.
    Answer(Answer),
    /// Route the request, in this session (if any); then call [`Sessions::settle`].
    Route(Admitted),
}

/// A `POST` the session half let through.
#[derive(Clone, Debug, Default)]
pub struct Admitted {
    /// The session the request runs in (`None`: stateless, e.g. 2026-07-28 traffic, or an
    /// `initialize` the route will refuse).
    pub session: Option<Arc<Session>>,
    /// Whether the session was minted by this request (`initialize`).
    pub minted: bool,
}

impl Sessions {
    /// The session half over `store` (an `Arc<SessionStore>` for the in-memory default).
    pub fn new(store: Arc<dyn SessionBackend>) -> Self {
        Sessions { store }
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn SessionBackend> {
        &self.store
    }

    /// `405` with `Allow: GET, POST, DELETE`, `-32000`.
    pub fn method_not_allowed() -> Answer {
        Answer::method_not_allowed(ALLOW_SESSION_METHODS, "Method not allowed")
    }

    /// Admit a `POST` whose body was read: find or mint its session (see the module table).
    /// No session is refused for its user: a host that gates requests by token checks that
    /// with [`McpServer::scope_admits`](crate::McpServer::scope_admits) (the route does).
    pub async fn post<H: Fields + ?Sized>(&self, fields: &H, body: &[u8]) -> Admit {
        if let Some(answer) = conflicting_fields(fields) {
            return Admit::Answer(answer);
        }
        self.admit(fields, body, |_: &Session| true).await
    }

    /// [`Sessions::post`] of a request whose single-value fields were checked already
    /// ([`conflicting_fields`], at the route's head), in a found session only if `allowed`
    /// admits it (one it does not is as an unknown one: `404`, or no session for 2026-07-28
    /// traffic).
    pub(crate) async fn admit<H: Fields + ?Sized>(
        &self,
        fields: &H,
        body: &[u8],
        allowed: impl Fn(&Session) -> bool,
    ) -> Admit {
        let forward = |session| {
            Admit::Route(Admitted {
                session,
                minted: false,
            })
        };
        // One lookup when the id is text (the usual case); a field that is not text is present.
        let id = fields.field(headers::MCP_SESSION_ID);
        if id.is_none() && !fields.has_field(headers::MCP_SESSION_ID) {
            if is_modern(fields, body) {
                // The 2026-07-28 wire has no sessions: straight to the route.
                return forward(None);
            }
            return match initialize_version(body) {
                Initialize::Valid(version, request_id) => match self.store.mint(version).await {
                    Ok(session) => Admit::Route(Admitted {
                        session: Some(session),
                        minted: true,
                    }),
                    // Each refusal answers the `initialize` by its id (JSON-RPC 2.0 §5: `null`
                    // only when the id cannot be read).
                    Err(MintError::AtCapacity) => {
                        let error = ErrorObject::new(
                            ErrorCode::SERVER_ERROR,
                            "Service Unavailable: too many sessions",
                        );
                        Admit::Answer(
                            Answer::json(503, &JsonRpcResponse::error(Some(request_id), error))
                                .with_header(headers::RETRY_AFTER, "60"),
                        )
                    }
                    Err(MintError::Unavailable(e)) => {
                        Admit::Answer(unavailable_to(&e, Some(request_id)))
                    }
                    Err(e) => {
                        tracing::error!(error = %e, "sessions: cannot mint an id");
                        let error = ErrorObject::internal("cannot mint a session id");
                        Admit::Answer(Answer::json(
                            500,
                            &JsonRpcResponse::error(Some(request_id), error),
                        ))
                    }
                },
                // The route answers the in-band -32602 (no session for a failed initialize), or
                // the parse error of a malformed body.
                Initialize::Invalid | Initialize::Malformed => forward(None),
                Initialize::Other => Admit::Answer(Answer::session_required()),
                // Never routed without a session (a route behind this half may be stateless).
                Initialize::Batch => Admit::Answer(sessionless_batch(fields, body)),
            };
        }
        match self.lookup_id(id).await {
            // Minted for an `initialize` answered with an error after its id went out (one
            // that waited): no request may use it; it ends now.
            Ok(Some(session)) if session.initialize_failed() => {
                if let Err(e) = self.store.end(session.id()).await {
                    tracing::warn!(error = %e, "sessions: cannot end a failed initialize's session");
                    session.close(None);
                }
                Admit::Answer(Answer::session_not_found())
            }
            Ok(Some(session)) if allowed(&session) => forward(Some(session)),
            // Modern traffic ignores a session id that names no live session (or another
            // user's, which is one as far as this request can tell).
            Ok(_) if is_modern(fields, body) => forward(None),
            Ok(_) => Admit::Answer(Answer::session_not_found()),
            Err(e) => Admit::Answer(unavailable(&e)),
        }
    }

    /// After the route answered an admitted `POST` (`success`: a `2xx` status): the
    /// `mcp-session-id` the answer carries, if any. A session minted by a request that failed
    /// (a status that is not `2xx`, or an `initialize` answered with a JSON-RPC error) is
    /// forgotten: the client gets no id, and the session does not count against the cap.
    pub async fn settle(&self, admitted: &Admitted, success: bool) -> Option<String> {
        let session = admitted.session.as_ref()?;
        if admitted.minted && (!success || session.initialize_failed()) {
            if let Err(e) = self.store.end(session.id()).await {
                // The session was never announced; a shared store expires it when idle.
                tracing::warn!(error = %e, "sessions: cannot forget a failed initialize's session");
                session.close(None);
            }
            return None;
        }
        Some(session.id().to_owned())
    }

    /// Answer a `GET`: the session's stream, resumed after `Last-Event-ID` (spec, Resumability
    /// and Redelivery).
    pub async fn get<H: Fields + ?Sized>(&self, fields: &H) -> Answer {
        self.get_if(fields, |_: &Session| true).await
    }

    /// [`Sessions::get`] of a session `allowed` admits (any other answers as an unknown one:
    /// the route's check that the request comes from the session's user).
    pub(crate) async fn get_if<H: Fields + ?Sized>(
        &self,
        fields: &H,
        allowed: impl Fn(&Session) -> bool,
    ) -> Answer {
        if let Some(answer) = conflicting_fields(fields) {
            return answer;
        }
        if !accept(fields).sse {
            return Answer::rpc_error(
                406,
                ErrorObject::new(
                    ErrorCode::INVALID_REQUEST,
                    "Not Acceptable: Accept must admit text/event-stream",
                ),
            );
        }
        let session = match self.require(fields, &allowed).await {
            Ok(session) => session,
            Err(answer) => return answer,
        };
        let last_event_id = fields.field(headers::LAST_EVENT_ID);
        if let Some(last) = last_event_id.filter(|last| !session.knows_event(last)) {
            // Another instance's stream, maybe: a shared log replays it and relays the rest.
            match self.store.resume_shared(&session, last).await {
                Ok(Some(events)) => {
                    if let Ok(cursor) = last.parse::<EventId>() {
                        self.store.attached(session.id(), cursor.stream).await;
                    }
                    return Answer::events(events)
                        .with_header(headers::MCP_SESSION_ID, session.id().to_owned());
                }
                Ok(None) => {}
                Err(e) => return unavailable(&e),
            }
        }
        let Some(attached) = session.resume(last_event_id) else {
            return Answer::session_not_found();
        };
        if attached.token != u64::MAX {
            // Live (not the whole replay of an answered stream).
            self.store.attached(session.id(), attached.stream).await;
        }
        let id = session.id().to_owned();
        let stream = Attachment::new(session, attached.stream, attached.token, attached.events);
        Answer::events(EventStream::new(stream)).with_header(headers::MCP_SESSION_ID, id)
    }

    /// Answer a `DELETE`: `204`, the session ends.
    pub async fn delete<H: Fields + ?Sized>(&self, fields: &H) -> Answer {
        self.delete_if(fields, |_: &Session| true).await
    }

    /// [`Sessions::delete`] of a session `allowed` admits (as [`Sessions::get_if`]).
    pub(crate) async fn delete_if<H: Fields + ?Sized>(
        &self,
        fields: &H,
        allowed: impl Fn(&Session) -> bool,
    ) -> Answer {
        if let Some(answer) = conflicting_fields(fields) {
            return answer;
        }
        let session = match self.require(fields, &allowed).await {
            Ok(session) => session,
            Err(answer) => return answer,
        };
        match self.store.end(session.id()).await {
            Ok(_) => Answer::empty(204),
            Err(e) => unavailable(&e),
        }
    }

    /// The live session a `GET` / `DELETE` names, or the answer: `400` without the header or
    /// with a bad version header, `404` for an unknown id (or one `allowed` does not admit),
    /// `503` when the store is unavailable.
    async fn require<H: Fields + ?Sized>(
        &self,
        fields: &H,
        allowed: impl Fn(&Session) -> bool,
    ) -> Result<Arc<Session>, Answer> {
        if let Err(e) = read_protocol_version(fields) {
            return Err(e.answer());
        }
        if !fields.has_field(headers::MCP_SESSION_ID) {
            return Err(Answer::session_required());
        }
        match self.lookup(fields).await {
            Ok(Some(session)) if allowed(&session) => Ok(session),
            Ok(_) => Err(Answer::session_not_found()),
            Err(e) => Err(unavailable(&e)),
        }
    }

    async fn lookup<H: Fields + ?Sized>(
        &self,
        fields: &H,
    ) -> Result<Option<Arc<Session>>, Unavailable> {
        self.lookup_id(fields.field(headers::MCP_SESSION_ID)).await
    }

    /// The live session `id` names (`None`: the field is not text, which names none).
    async fn lookup_id(&self, id: Option<&str>) -> Result<Option<Arc<Session>>, Unavailable> {
        match id {
            Some(id) => match self.store.touch_now(id) {
                Some(found) => found,
                None => self.store.touch(id).await,
            },
            None => Ok(None),
        }
    }
}

/// `503` with `Retry-After`, `-32000`: the session store cannot answer now (the client retries;
/// its session is not gone).
fn unavailable(e: &Unavailable) -> Answer {
    unavailable_to(e, None)
}

/// [`unavailable`] answering the request with id `id`.
fn unavailable_to(e: &Unavailable, id: Option<RequestId>) -> Answer {
    tracing::warn!(error = %e, "sessions: the session store is unavailable");
    let error = ErrorObject::new(
        ErrorCode::SERVER_ERROR,
        "Service Unavailable: the session store cannot be reached",
    );
    Answer::json(503, &JsonRpcResponse::error(id, error)).with_header(headers::RETRY_AFTER, "1")
}

/// The events of one session stream for one connection; dropping it (the client went away, or
/// the stream ended) detaches the connection from the stream, which keeps logging for a resume.
pub struct Attachment {
    events: EventReceiver,
    session: Arc<Session>,
    stream: u64,
    token: u64,
}

impl Attachment {
    /// The connection `token` on `stream` of `session`, receiving `events`.
    pub fn new(session: Arc<Session>, stream: u64, token: u64, events: EventReceiver) -> Self {
        Attachment {
            events,
            session,
            stream,
            token,
        }
    }
}

impl Stream for Attachment {
    type Item = String;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<String>> {
        Pin::new(&mut self.events).poll_next(cx)
    }
}

impl Drop for Attachment {
    fn drop(&mut self) {
        self.session.detach(self.stream, self.token);
    }
}

/// Whether a `POST` is 2026-07-28 traffic: an `MCP-Protocol-Version` outside the handshake era,
/// or a request whose body carries modern `_meta`.
fn is_modern<H: Fields + ?Sized>(fields: &H, body: &[u8]) -> bool {
    let header = fields.field(headers::MCP_PROTOCOL_VERSION).map(str::trim);
    if header.is_some_and(|v| !era::is_legacy_version(v)) {
        return true;
    }
    matches!(
        JsonRpcMessage::from_slice(body),
        Ok(JsonRpcMessage::Request(r)) if era::has_modern_meta(r.params.as_ref())
    )
}

enum Initialize {
    /// An `initialize` request with a negotiable version, and its id.
    Valid(&'static str, RequestId),
    /// A JSON-RPC batch (an array), which an `initialize` cannot be part of.
    Batch,
    /// An `initialize` request whose params the server will refuse.
    Invalid,
    /// A well-formed message that is not an `initialize` request.
    Other,
    /// Not a message at all (the route answers its parse error).
    Malformed,
}

/// What a `POST` without a session id holds, read from its text as the route reads it (so a
/// message the route would run — an integer id beyond 64 bits included — is never taken for a
/// malformed one and routed without a session).
fn initialize_version(body: &[u8]) -> Initialize {
    match JsonRpcMessage::from_slice(body) {
        Ok(JsonRpcMessage::Request(request)) if request.method == "initialize" => {
            match negotiate_initialize(request.params.as_ref()) {
                Ok(version) => Initialize::Valid(version, request.id),
                Err(_) => Initialize::Invalid,
            }
        }
        Ok(_) => Initialize::Other,
        Err(invalid) if invalid.is_batch() => Initialize::Batch,
        Err(_) => Initialize::Malformed,
    }
}

/// The answer to a JSON-RPC batch `POST`ed without a session id where the route has sessions
/// (the session half answers it: a route behind it may be stateless): at a revision that does
/// not receive batches (its `MCP-Protocol-Version`) the refusal as before; else `400`, why the
/// batch is refused whole when it is (an `initialize` in it, `[]`), or "mcp-session-id header is
/// required" (only an `initialize` mints a session, and it cannot be batched).
fn sessionless_batch<H: Fields + ?Sized>(fields: &H, body: &[u8]) -> Answer {
    let refused = || {
        let refusal = match JsonRpcMessage::from_slice(body) {
            Err(invalid) => invalid.response(),
            Ok(_) => None,
        };
        refusal.map_or_else(Answer::session_required, |r| Answer::json(400, &r))
    };
    match read_protocol_version_str(fields) {
        Ok(Some(version)) if !receives_batches(version) => return refused(),
        Err(e) => return e.answer(),
        _ => {}
    }
    match JsonRpcBatch::from_slice(body).map(batch::screen) {
        Ok(Ok(_)) => Answer::session_required(),
        Ok(Err(error)) => Answer::rpc_error(400, error),
        Err(invalid) => match invalid.response() {
            Some(response) => Answer::json(400, &response),
            None => Answer::session_required(),
        },
    }
}

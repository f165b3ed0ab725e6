//! The client side of Streamable HTTP without I/O: which headers each request carries and how
//! each answer is read, as a deterministic machine the native (hyper) and wasm (`fetch`) client
//! transports drive. Spec: [Streamable HTTP, 2025-11-25](https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http)
//! and [2026-07-28](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http)
//! (the `Mcp-Method` / `Mcp-Name` / `Mcp-Param-*` headers:
//! [SEP-2243](https://modelcontextprotocol.io/seps/2243-http-standardization)).
//!
//! ```text
//!  Endpoint (url, caller headers, session id, protocol version, deadline)
//!     │ exchange(message)                 │ listen()             │ close()
//!     ▼                                   ▼                      ▼
//!  Exchange ── Step ──► host ──► Input    Listen (GET stream)    DELETE (an Outgoing)
//!     Send(Outgoing)    send it          Response{status, headers} / Failed(text) / Refused(addr)
//!     Read              next body chunk  Chunk(bytes) / End / Failed(text)
//!     Wait(duration)    sleep            Waited
//!     Authorize(..)     get a token      Token(Some | None)
//!     Done(result)      —                (TimedOut when the host's deadline timer fires)
//!  events(): Message(json) to deliver, Problem(text) to report, Session* / Moved to apply to the Endpoint
//! ```
//!
//! Nothing here reads a clock, spawns or touches a socket: a retry delay is a [`Step::Wait`] the
//! host sleeps, the exchange deadline is [`Exchange::deadline`] the host arms (its timer feeds
//! [`Input::TimedOut`]).
//!
//! How a `POST` answer is read ([`Exchange`]):
//!
//! | answer | outcome |
//! |---|---|
//! | `301` / `302` / `307` / `308` with a `Location` on the endpoint's origin | the same request sent there (method, headers, body unchanged; a resumed stream's `GET` too), at most [`MAX_REDIRECTS`] times; a `301` / `308` moves the endpoint ([`Event::Moved`]: later requests and the session's `DELETE` go there, which [`Outgoing::redirected`] follows too); another origin, a `303`, no `Location`: [`ClientError::Transport`](crate::client::ClientError::Transport) naming where it led (a browser's `fetch` follows redirects itself, so the wasm host never sees one) |
//! | `202` | `Ok` (a notification or response was accepted); to a request, [`ClientError::Transport`](crate::client::ClientError::Transport) at once (no response will come) |
//! | `401` / `403` | [`Step::Authorize`] with the [`Challenge`] (`WWW-Authenticate` kept); a token retries once with `Authorization: Bearer`, none reads on as below |
//! | `200`, `application/json` | the body's message(s) are delivered; a request needs its response among them |
//! | `200`, `text/event-stream` | chunks go through the [`sse::Decoder`](crate::wire::sse::Decoder); each event's data is delivered; done at the response to the request; a stream that ends first is resumed (below) |
//! | `404` to a request that carried `Mcp-Session-Id` | [`ClientError::SessionExpired`](crate::client::ClientError::SessionExpired) |
//! | `400` to a request that carried `Mcp-Session-Id`, body not answering the request and speaking of the session (its error message, else its text, says "session") | [`ClientError::SessionExpired`](crate::client::ClientError::SessionExpired) (servers that answer an unknown session with `400`); any other `400` is that error |
//! | `401` / `403` without `WWW-Authenticate` to a request that carried `Mcp-Session-Id`, once no token was given, body speaking of the session | [`ClientError::SessionExpired`](crate::client::ClientError::SessionExpired) (rmcp before 2026-02 answered an unknown session `401 Unauthorized: Session not found`; a bare 401 asks for no credentials, RFC 9110 §15.5.2) |
//! | non-2xx to a 2026-07-28 request | [`ClientError::HttpStatus`](crate::client::ClientError::HttpStatus) with the body's JSON-RPC error |
//! | other status | a JSON-RPC response in the body answering the request is delivered; else [`ClientError::Transport`](crate::client::ClientError::Transport) with the status and the body's message |
//! | the connection refused | [`ClientError::ConnectionRefused`](crate::client::ClientError::ConnectionRefused) for that request only |
//! | send failure, broken body, deadline | [`ClientError::Transport`](crate::client::ClientError::Transport) for that request only |
//!
//! SSE resume ([SEP-1699](https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#resumability-and-redelivery)):
//! a request's stream that ends (or breaks) before its response, after an event id was seen, is
//! resumed with `GET` + `Last-Event-ID` after the server's `retry` (at least [`MIN_RECONNECT_MS`],
//! default [`DEFAULT_RECONNECT_MS`]), at most [`MAX_RESUMES`] times and [`MAX_RESUME_WAIT_MS`] of waiting.
//! A resuming `GET` answered `404` in a session fails the request at once (not sent again in a
//! new session: it was received and may have run); a `400`, `405` (no `GET` streams), `410` and
//! the other `4xx` that asking again gets the same end the resumes at once; `401`, `403`,
//! `408`, `409`, `425`, `429` and `5xx` are resumed within the bounds.
//!
//! The server's own stream ([`Listen`]): a `GET` with `Accept: text/event-stream`; `405` means
//! the server offers none (done quietly); an ended stream is resumed with `Last-Event-ID` after
//! `retry` (at least [`MIN_RECONNECT_MS`]); after [`MAX_IDLE_RECONNECTS`] reconnections in a row that bring no event, or any
//! other failure, it stops with a problem.
//!
//! The authorization seam: [`Authorizer`] is what a transport consults on [`Step::Authorize`]
//! (401 → get a token → retry once). The native HTTP transport takes one
//! (`set_authorizer`, e.g. `native::client::oauth::OAuthClient`), the wasm fetch transport its
//! `auth` option; without one a host answers [`Input::Token`]`(None)` and the `401` is read like
//! any other status.

mod endpoint;
mod listen;
mod post;
mod redirect;
mod status;
#[cfg(test)]
mod tests;

use std::time::Duration;

use serde_json::Value;

use crate::http::headers::{LOCATION, TEXT_EVENT_STREAM};
use crate::{BoxFuture, MaybeSend, MaybeSync};

pub use endpoint::Endpoint;
pub use listen::Listen;
pub use post::Exchange;
pub use redirect::MAX_REDIRECTS;
pub use status::{answers, error_summary, speaks_of_a_session, status_text};

/// How long to wait before resuming an SSE stream whose server sent no `retry`: 1 000 ms.
pub const DEFAULT_RECONNECT_MS: u64 = 1_000;

/// The shortest wait before resuming an SSE stream: 100 ms, whatever smaller `retry` the
/// server sent (a `retry: 0` stream that ends at once would otherwise be reopened in a hot loop).
pub const MIN_RECONNECT_MS: u64 = 100;

/// The wait before resuming a stream whose decoder saw `retry` (or none): the server's value, at
/// least [`MIN_RECONNECT_MS`], else [`DEFAULT_RECONNECT_MS`].
fn reconnect_ms(decoder: &crate::wire::sse::Decoder) -> u64 {
    decoder
        .retry()
        .map_or(DEFAULT_RECONNECT_MS, |ms| ms.max(MIN_RECONNECT_MS))
}

/// How many times in a row the server's `GET` stream is resumed without receiving any event
/// before it is given up.
pub const MAX_IDLE_RECONNECTS: u32 = 5;

/// The longest a request's interrupted SSE stream is resumed for (summed `retry` waits) before
/// the request fails: 60 000 ms.
pub const MAX_RESUME_WAIT_MS: u64 = 60_000;

/// The most times one request's interrupted SSE stream is resumed.
pub const MAX_RESUMES: u32 = 20;

/// The largest non-SSE reply body read: 16 MiB (a larger one fails the exchange).
pub const MAX_REPLY_BYTES: usize = 16 * 1024 * 1024;

/// How long a `POST` of answers to the server's requests waits for the server's `202` when the
/// endpoint has no timeout of its own: 30 s. A request or a notification is bounded by its
/// sender (the client's timeout drops the exchange); nothing bounds answers but this (a server
/// that never took one held its connection for good).
pub const ACCEPT_TIMEOUT: Duration = Duration::from_secs(30);

/// The most answers to the server's requests a host has on their way at once (each its own
/// `POST`, bounded by [`ACCEPT_TIMEOUT`]): 16. Past it, an answer is dropped with a report: a
/// server that floods requests and never takes the answers does not make the host open
/// connections without bound.
pub const MAX_ANSWERS_IN_FLIGHT: usize = 16;

/// The report of an answer dropped at [`MAX_ANSWERS_IN_FLIGHT`].
pub fn answer_dropped() -> String {
    format!(
        "an answer to the server was dropped: {MAX_ANSWERS_IN_FLIGHT} answers are still on their way (the server is not taking them)"
    )
}

/// How long a host waits for the `DELETE` that ends a session on close: 2 s.
pub const CLOSE_TIMEOUT: Duration = Duration::from_secs(2);

/// How long a host's `send` of `notifications/initialized` waits for the server's `GET` stream
/// ([`Listen`]) to be answered (or to fail) before it returns: 2 s. Waiting orders the stream
/// before the client's next request, so a server never mistakes it for a resumption.
pub const LISTEN_ARM_TIMEOUT: Duration = Duration::from_secs(2);

/// An HTTP method a client sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// `GET`: the server's stream, or a resumed request stream.
    Get,
    /// `POST`: one JSON-RPC message.
    Post,
    /// `DELETE`: end the session.
    Delete,
}

impl Method {
    /// The method's name, e.g. `"POST"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Delete => "DELETE",
        }
    }
}

/// A request for the host to send, as plain data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outgoing {
    /// The method.
    pub method: Method,
    /// The endpoint URL, as configured.
    pub url: String,
    /// Header name/value pairs, in order (names as given: lowercase for ours, the caller's as
    /// the caller spelled them). A host appends them; a repeated name is sent repeatedly.
    pub headers: Vec<(String, String)>,
    /// The body (the JSON text of a `POST`; empty otherwise).
    pub body: Vec<u8>,
}

impl Outgoing {
    /// This request sent again where a redirect answering it leads, when the
    /// redirect rule (the module's table) follows it (`301` / `302` / `307` / `308`
    /// to the same origin): for a request no machine drives, the session's `DELETE`. A host
    /// follows at most [`MAX_REDIRECTS`] in a row.
    pub fn redirected(&self, status: u16, headers: &[(String, String)]) -> Option<Outgoing> {
        if !redirect::is_followed(status) {
            return None;
        }
        let url = redirect::target(&self.url, status, header(headers, LOCATION)).ok()?;
        Some(Outgoing {
            url,
            ..self.clone()
        })
    }

    /// The first value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }
}

/// The first value of header `name` (any case) in `headers`.
pub fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// What the host tells a machine ([`Exchange::handle`], [`Listen::handle`]).
#[derive(Clone, Copy, Debug)]
pub enum Input<'a> {
    /// The answer's status and headers arrived (after a [`Step::Send`]).
    Response {
        /// The HTTP status code.
        status: u16,
        /// The answer's header name/value pairs (any case).
        headers: &'a [(String, String)],
    },
    /// One chunk of the answer's body (after a [`Step::Read`]).
    Chunk(&'a [u8]),
    /// The body ended (after a [`Step::Read`]).
    End,
    /// The request could not be sent, or the body broke: the host's error text.
    Failed(&'a str),
    /// The connection to this `host:port` was refused (after a [`Step::Send`]; nothing was
    /// sent): a `POST` ends with [`ClientError::ConnectionRefused`](crate::client::ClientError::ConnectionRefused).
    Refused(&'a str),
    /// The delay of a [`Step::Wait`] passed.
    Waited,
    /// The answer to a [`Step::Authorize`]: a bearer token to retry with, or none.
    Token(Option<&'a str>),
    /// The host's timer for [`Exchange::deadline`] fired.
    TimedOut,
}

impl Input<'_> {
    /// The variant's name, for the error a machine ends with when the host feeds an input out of
    /// turn (the derived `Debug` would print the payload, and bring every payload type's `Debug`
    /// into the wasm module).
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Input::Response { .. } => "Response",
            Input::Chunk(_) => "Chunk",
            Input::End => "End",
            Input::Failed(_) => "Failed",
            Input::Refused(_) => "Refused",
            Input::Waited => "Waited",
            Input::Token(_) => "Token",
            Input::TimedOut => "TimedOut",
        }
    }
}

/// What a machine asks the host to do next.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Send this request; answer with [`Input::Response`], [`Input::Failed`] or
    /// [`Input::Refused`]. Drop any body
    /// still being read.
    Send(Outgoing),
    /// Read the next chunk of the current body; answer with [`Input::Chunk`], [`Input::End`]
    /// or [`Input::Failed`].
    Read,
    /// Wait this long, then answer [`Input::Waited`].
    Wait(Duration),
    /// The server asked for authorization: answer [`Input::Token`] (e.g. from an
    /// [`Authorizer`]).
    Authorize(Challenge),
    /// Finished: release the body (cancel its stream). Events may still be queued.
    Done(Result<(), crate::client::ClientError>),
}

/// What a machine reports besides its steps; drain with `poll_event` after each call.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A JSON value (a message or a batch) for the client's sink.
    Message(Value),
    /// A non-fatal problem for the client's sink (an SSE event that is not JSON, a stream that
    /// stopped).
    Problem(String),
    /// The `initialize` answer assigned this session: apply it ([`Endpoint::apply`]).
    SessionStarted(String),
    /// The server no longer knows this session: apply it ([`Endpoint::apply`]).
    SessionExpired(String),
    /// The endpoint answered a permanent redirect (`301` / `308`, RFC 9110 §15.4) that was
    /// followed to this URL on its own origin: later requests, the `GET` stream and the session's
    /// `DELETE` go there ([`Endpoint::apply`]). A temporary one (`302` / `307`) is followed for
    /// its request only.
    Moved(String),
}

/// What a host loop needs of a machine ([`Exchange`], [`Listen`]): one driver serves both.
pub trait Machine {
    /// Feed what happened; get the next step.
    fn handle(&mut self, input: Input<'_>) -> Step;
    /// The next event to act on, in order.
    fn poll_event(&mut self) -> Option<Event>;
}

impl Machine for Exchange {
    fn handle(&mut self, input: Input<'_>) -> Step {
        Exchange::handle(self, input)
    }
    fn poll_event(&mut self) -> Option<Event> {
        Exchange::poll_event(self)
    }
}

impl Machine for Listen {
    fn handle(&mut self, input: Input<'_>) -> Step {
        Listen::handle(self, input)
    }
    fn poll_event(&mut self) -> Option<Event> {
        Listen::poll_event(self)
    }
}

/// A `401` / `403` answer: what an [`Authorizer`] needs to get a token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Challenge {
    /// `401` or `403`.
    pub status: u16,
    /// The `WWW-Authenticate` header (RFC 6750 / RFC 9728 `resource_metadata`), if any.
    pub www_authenticate: Option<String>,
    /// The `DPoP-Nonce` header (RFC 9449 §9), if any.
    pub dpop_nonce: Option<String>,
}

/// The authorization seam: what a transport consults on [`Step::Authorize`] (the 2025-11-25
/// [authorization](https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization)
/// flow: a `401` → get a token → retry once with `Authorization: Bearer <token>`).
/// `native::client::oauth::OAuthClient` implements it (the authorization code and client credentials grants).
pub trait Authorizer: MaybeSend + MaybeSync {
    /// A bearer token for `challenge`, or `None` to give up (the answer is then read as is).
    fn authorize(&self, challenge: &Challenge) -> BoxFuture<'_, Option<String>>;

    /// The token to send with every request before any challenge (one obtained earlier and
    /// still valid), so that only a refused or expired one costs a `401` round; default none.
    fn current(&self) -> Option<String> {
        None
    }

    /// Called before each request is sent, awaited: the place to refresh credentials about to
    /// expire, so the request does not cost a `401` round; default nothing.
    fn prepare(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    /// The headers that carry the current credentials on a `method` request to `url` (for
    /// each request, as a DPoP proof is per request); default: `Authorization: Bearer` with
    /// [`Authorizer::current`]. A transport sends them unless its caller set an
    /// `Authorization` header of its own.
    fn request_headers(&self, method: &str, url: &str) -> Vec<(String, String)> {
        let _ = (method, url);
        self.current()
            .map(|token| vec![("authorization".to_owned(), format!("Bearer {token}"))])
            .unwrap_or_default()
    }
}

/// Whether a `Content-Type` value names `text/event-stream` (parameters ignored).
fn is_event_stream(content_type: Option<&str>) -> bool {
    content_type
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case(TEXT_EVENT_STREAM))
}

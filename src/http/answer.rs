//! The plan's answer as plain data: a status, header fields and a body that is JSON, nothing,
//! text, or an event stream a host writes out as `text/event-stream` (spec `basic/transports`,
//! Sending Messages to the Server:
//! <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>).
//!
//! The error bodies of the route live here too: a JSON-RPC error response with id `null`
//! ([`Answer::rpc_error`]), the same on every host.

use std::borrow::Cow;
use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;

use crate::http::headers;
use crate::wire::jsonrpc::{ErrorCode, ErrorObject, JsonRpcBatchResponse, JsonRpcResponse};

cfg_if::cfg_if! {
    if #[cfg(target_family = "wasm")] {
        type Events = futures::stream::LocalBoxStream<'static, String>;
    } else {
        // `Sync` too: hyper's boxed body is `Send + Sync`.
        type Events = Pin<Box<dyn Stream<Item = String> + Send + Sync>>;
    }
}

/// The events of a `text/event-stream` answer, each ready-encoded SSE text
/// ([`crate::wire::sse::encode_event`]); ends when the stream is over. Dropping it is the client going
/// away: a stateless request's dispatch is then cancelled (the 2026-07-28 transport: closing
/// the stream cancels the request,
/// <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>),
/// a session stream is detached (the request keeps running; its events stay in the replay log
/// for a `GET` with `Last-Event-ID`).
///
/// Keep-alive comments are the host's, on its timer: write [`crate::wire::sse::KEEP_ALIVE`] when no
/// event came for a while.
pub struct EventStream(Inner);

/// What an [`EventStream`] holds: a stream, or events all known when the answer is made (a
/// reply that was over at once: no stream to box and poll).
enum Inner {
    Stream(Events),
    Ended(std::vec::IntoIter<String>),
    One(Option<String>),
}

impl EventStream {
    /// Wrap a stream of encoded events (and whatever it owns: dropping it drops them).
    #[cfg(not(target_family = "wasm"))]
    pub fn new(events: impl Stream<Item = String> + Send + Sync + 'static) -> Self {
        EventStream(Inner::Stream(Box::pin(events)))
    }

    /// Wrap a stream of encoded events (and whatever it owns: dropping it drops them).
    #[cfg(target_family = "wasm")]
    pub fn new(events: impl Stream<Item = String> + 'static) -> Self {
        EventStream(Inner::Stream(Box::pin(events)))
    }

    /// The stream of `events`, each encoded, then its end: a reply over when it is answered.
    pub fn ended(events: Vec<String>) -> Self {
        EventStream(Inner::Ended(events.into_iter()))
    }

    /// The stream of one encoded event, then its end.
    pub fn one(event: String) -> Self {
        EventStream(Inner::One(Some(event)))
    }
}

impl Stream for EventStream {
    type Item = String;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<String>> {
        match &mut self.0 {
            Inner::Stream(events) => events.as_mut().poll_next(cx),
            Inner::Ended(events) => Poll::Ready(events.next()),
            Inner::One(event) => Poll::Ready(event.take()),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.0 {
            Inner::Stream(events) => events.size_hint(),
            Inner::Ended(events) => events.size_hint(),
            Inner::One(event) => (
                usize::from(event.is_some()),
                Some(usize::from(event.is_some())),
            ),
        }
    }
}

impl fmt::Debug for EventStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EventStream")
    }
}

/// The body of an [`Answer`].
#[derive(Debug)]
pub enum AnswerBody {
    /// No body (`202`, `204`).
    Empty,
    /// JSON text (`Content-Type: application/json` is in the headers).
    Json(String),
    /// Plain text (`Content-Type: text/plain; charset=utf-8` is in the headers).
    Text(&'static str),
    /// An event stream (`Content-Type: text/event-stream` is in the headers).
    Events(EventStream),
}

/// What to send back: a status, header fields (lowercase names from
/// [`crate::http::headers`]), a body.
#[derive(Debug)]
pub struct Answer {
    /// The HTTP status code.
    pub status: u16,
    /// The header fields, in order; the core's constant values are borrowed (no copy per
    /// answer).
    pub headers: Vec<(&'static str, Cow<'static, str>)>,
    /// The body.
    pub body: AnswerBody,
}

impl Answer {
    /// An answer with no body.
    pub fn empty(status: u16) -> Answer {
        Answer {
            status,
            headers: Vec::new(),
            body: AnswerBody::Empty,
        }
    }

    /// A JSON-RPC response as `application/json`.
    pub fn json(status: u16, response: &JsonRpcResponse) -> Answer {
        Answer {
            status,
            headers: vec![(
                headers::CONTENT_TYPE,
                Cow::Borrowed(headers::APPLICATION_JSON),
            )],
            body: AnswerBody::Json(response.to_json()),
        }
    }

    /// A JSON-RPC batch's reply (one array of responses) as `application/json`.
    pub fn json_batch(status: u16, reply: &JsonRpcBatchResponse) -> Answer {
        Answer {
            status,
            headers: vec![(
                headers::CONTENT_TYPE,
                Cow::Borrowed(headers::APPLICATION_JSON),
            )],
            body: AnswerBody::Json(reply.to_json()),
        }
    }

    /// A JSON-RPC error response with id `null`.
    pub fn rpc_error(status: u16, error: ErrorObject) -> Answer {
        Answer::json(status, &JsonRpcResponse::error(None, error))
    }

    /// Plain text.
    pub fn text(status: u16, text: &'static str) -> Answer {
        Answer {
            status,
            headers: vec![(headers::CONTENT_TYPE, Cow::Borrowed(headers::TEXT_PLAIN))],
            body: AnswerBody::Text(text),
        }
    }

    /// `200 text/event-stream` with `Cache-Control: no-cache`, streaming `events`.
    pub fn events(events: EventStream) -> Answer {
        // Room for a third field (a session's `mcp-session-id`) without growing.
        let mut fields = Vec::with_capacity(3);
        fields.push((
            headers::CONTENT_TYPE,
            Cow::Borrowed(headers::TEXT_EVENT_STREAM),
        ));
        fields.push((headers::CACHE_CONTROL, Cow::Borrowed(headers::NO_CACHE)));
        Answer {
            status: 200,
            headers: fields,
            body: AnswerBody::Events(events),
        }
    }

    /// Add a header field.
    pub fn with_header(
        mut self,
        name: &'static str,
        value: impl Into<Cow<'static, str>>,
    ) -> Answer {
        self.headers.push((name, value.into()));
        self
    }

    /// The first value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_ref())
    }

    /// Whether the status is `2xx`.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// `404 Not Found`, plain text: a path the route does not serve.
    pub fn not_found() -> Answer {
        Answer::text(404, "Not Found")
    }

    /// `405` with `Allow: {allow}` and a `-32000` body saying `message`.
    pub fn method_not_allowed(allow: &'static str, message: &'static str) -> Answer {
        Answer::rpc_error(405, ErrorObject::new(ErrorCode::SERVER_ERROR, message))
            .with_header(headers::ALLOW, allow)
    }

    /// `413`, `-32600`: a body over `limit` bytes.
    pub fn too_large(limit: usize) -> Answer {
        Answer::rpc_error(
            413,
            ErrorObject::invalid_request(format!("body over {limit} bytes")),
        )
    }

    /// `404`, `-32600` "Session not found": an unknown, ended or expired session id (seed
    /// `rejectUnknownSession`; spec `basic/transports`, Session Management).
    pub fn session_not_found() -> Answer {
        Answer::rpc_error(
            404,
            ErrorObject::new(ErrorCode::INVALID_REQUEST, "Session not found"),
        )
    }

    /// `400`, `-32600`: a request that needs an `Mcp-Session-Id` came without one.
    pub fn session_required() -> Answer {
        Answer::rpc_error(
            400,
            ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                "Bad Request: mcp-session-id header is required",
            ),
        )
    }
}

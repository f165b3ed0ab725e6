//! The client's transport seam (seed `ClientTransportInterface`, clauses 13–15, 17, 20).
//!
//! A transport moves JSON-RPC messages; the [`McpClient`](crate::client::McpClient) does
//! everything else. The client hands the transport a [`TransportSink`] in
//! [`ClientTransport::start`]; the transport reports every inbound JSON value, every
//! non-fatal problem and its own close through it:
//!
//! ```text
//!  McpClient ── send(message) ──► transport ──► wire
//!      ▲                              │
//!      └── sink.receive(value) ◄──────┘  (returns replies to write back, e.g. a ping answer)
//!          sink.error(text) / sink.closed(cause)
//! ```
//!
//! The sink is synchronous and does no I/O; the transport writes the reply that
//! [`TransportSink::receive`] returns (e.g. a `ping` answer). Answers that take time (a
//! [`ClientHandler`](crate::client::ClientHandler)'s sampling, elicitation or roots) are not
//! returned here: the client runs them on its spawner and writes them with
//! [`ClientTransport::send`], so transports need nothing extra and the core stays
//! runtime-agnostic (tokio on native, `spawn_local` in a browser, or an injected spawner).
//!
//! A JSON-RPC batch from the server (an array; the 2025-03-26 revision allows them) is taken
//! element by element, each as it would be alone, and answered as
//! [JSON-RPC 2.0](https://www.jsonrpc.org/specification#batch) asks:
//!
//! | the batch | the answer |
//! |---|---|
//! | requests the client answers at once (`ping`, an unsupported method, an invalid request) | one array ([`SinkReply::Batch`]), returned by [`TransportSink::receive`] |
//! | with a request a [`ClientHandler`](crate::client::ClientHandler) answers | one array, once every request of it is answered: written with [`ClientTransport::send_batch`] |
//! | only notifications and responses | nothing |
//! | `[]` | one `-32600` error, id `null` ([`SinkReply::Message`]), and an `error` event |
//!
//! Each request of a batch is answered exactly once, inside that array. stdio and WebSocket
//! write the array as one line / frame, Streamable HTTP `POST`s it as one body (2025-03-26
//! allows "an array batching one or more responses"); a transport that can carry one message
//! at a time only (the default [`ClientTransport::send_batch`], a JS transport's `send`)
//! sends its responses one by one, in order.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::client::error::ClientError;
use crate::wire::framing::{Overlong, OverlongVerdict};
use crate::wire::jsonrpc::{JsonRpcBatchResponse, JsonRpcMessage};
use crate::{BoxFuture, MaybeSend, MaybeSync};

/// A bidirectional JSON-RPC carrier to one remote server (seed `ClientTransportInterface`).
///
/// Futures and the transport are `Send` on native targets and need not be on wasm (see
/// [`MaybeSend`]). Implementations must be safe to call concurrently: the client sends
/// concurrent requests without waiting for earlier replies.
pub trait ClientTransport: MaybeSend + MaybeSync + 'static {
    /// Open the transport and arm its reader (a no-op for request/response transports such as
    /// HTTP). Inbound messages, errors and the close are reported through `sink` from now on.
    /// The client calls `start` once per `connect`; after [`ClientTransport::close`] a transport
    /// may be started again.
    ///
    /// # Errors
    /// The transport could not open (spawn failure, refused connection, failed handshake).
    fn start(&self, sink: TransportSink) -> BoxFuture<'_, Result<(), ClientError>>;

    /// Write one message. A reply the transport receives because of it goes to the sink, not to
    /// the return value; a transport may deliver it before `send` returns.
    ///
    /// # Errors
    /// [`ClientError::TransportClosed`] when the transport can no longer carry anything (the
    /// client then fails every pending request); any other error fails only the request this
    /// message carried (e.g. an HTTP status, [`ClientError::SessionExpired`]).
    fn send(&self, message: JsonRpcMessage) -> BoxFuture<'_, Result<(), ClientError>>;

    /// Write one 2026-07-28 request with its per-request HTTP headers (`MCP-Protocol-Version`,
    /// `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`). An HTTP transport sends them, keeps no session
    /// and reports a non-2xx reply as [`ClientError::HttpStatus`] (with the body's JSON-RPC
    /// error) instead of delivering it. Transports without headers (stdio, WebSocket) ignore
    /// them: the default is [`ClientTransport::send`].
    ///
    /// # Errors
    /// As [`ClientTransport::send`], plus [`ClientError::HttpStatus`].
    fn send_modern(
        &self,
        message: JsonRpcMessage,
        headers: Vec<(String, String)>,
    ) -> BoxFuture<'_, Result<(), ClientError>> {
        let _ = headers;
        self.send(message)
    }

    /// Whether this transport carries per-request headers (HTTP): then the client computes
    /// them, filters tools with invalid `x-mcp-header` annotations, and reads HTTP statuses in
    /// the auto-mode probe. Default `false`.
    fn uses_headers(&self) -> bool {
        false
    }

    /// Write the answers to a batch of the server's requests as one JSON array (JSON-RPC 2.0
    /// batch): one line, frame or `POST` body. The default, for a transport that carries one
    /// message at a time, sends each response with [`ClientTransport::send`], in order,
    /// stopping at the first error.
    ///
    /// # Errors
    /// As [`ClientTransport::send`].
    fn send_batch(&self, batch: JsonRpcBatchResponse) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(async move {
            for response in batch.into_responses() {
                self.send(JsonRpcMessage::Response(response)).await?;
            }
            Ok(())
        })
    }

    /// Close the transport and release its resources (kill the child, close the socket, end
    /// the HTTP session). Idempotent. A transport may, but need not, report
    /// [`TransportSink::closed`] for a close the client asked for.
    fn close(&self) -> BoxFuture<'_, ()>;

    /// Called by the client after `initialize` with the negotiated protocol version (the HTTP
    /// transport sends it as `MCP-Protocol-Version` on later requests). Default: ignored.
    fn set_protocol_version(&self, _version: &str) {}

    /// The session id the server assigned, if the transport has sessions (Streamable HTTP).
    fn session_id(&self) -> Option<String> {
        None
    }
}

/// Where a transport reports what it receives (implemented by the client; implement it to
/// drive a transport without a client, e.g. in tests).
pub trait SinkHandler: MaybeSend + MaybeSync + 'static {
    /// One inbound JSON value (an object, or a batch array). Returns what the transport must
    /// write back to the server now (the answer to a server→client request, or one array
    /// answering a batch), if anything.
    fn receive(&self, value: Value) -> Option<SinkReply>;
    /// A non-fatal problem (a line that is not JSON, a bad frame, a failed reply write).
    fn error(&self, message: String);
    /// The transport closed on its own (child exit, socket close); `cause` says why.
    fn closed(&self, cause: String);
}

/// What a transport writes back for one inbound value ([`TransportSink::receive`]).
#[derive(Clone, Debug, PartialEq)]
pub enum SinkReply {
    /// One message: the answer to a single request from the server, or the single error an
    /// empty batch gets.
    Message(JsonRpcMessage),
    /// One JSON array: the answers to the requests of a batch, in the batch's order.
    Batch(JsonRpcBatchResponse),
}

impl SinkReply {
    /// The text to write: one JSON object or one JSON array.
    pub fn to_json(&self) -> String {
        match self {
            SinkReply::Message(message) => message.to_json(),
            SinkReply::Batch(batch) => batch.to_json(),
        }
    }

    /// The messages it holds, in order (for a transport that carries one at a time).
    pub fn into_messages(self) -> Vec<JsonRpcMessage> {
        match self {
            SinkReply::Message(message) => vec![message],
            SinkReply::Batch(batch) => batch
                .into_responses()
                .into_iter()
                .map(JsonRpcMessage::Response)
                .collect(),
        }
    }
}

/// A cheap, cloneable handle to a [`SinkHandler`], given to [`ClientTransport::start`].
#[derive(Clone)]
pub struct TransportSink {
    handler: Arc<dyn SinkHandler>,
}

impl fmt::Debug for TransportSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TransportSink")
    }
}

impl TransportSink {
    /// A sink over any handler.
    pub fn new(handler: impl SinkHandler) -> Self {
        TransportSink {
            handler: Arc::new(handler),
        }
    }

    /// Report one inbound JSON value; write back what it returns (one message or one array).
    pub fn receive(&self, value: Value) -> Option<SinkReply> {
        self.handler.receive(value)
    }

    /// Report inbound text: parsed as JSON, then [`TransportSink::receive`]. Text that is not
    /// JSON is reported with [`TransportSink::error`] and skipped.
    ///
    /// Valid JSON the parser cannot read (nesting, number range, a lone surrogate; see
    /// [`JsonRpcMessage::from_slice`]) is never left unanswered: a response fails the pending
    /// request with its id (see `unreadable`), a request from the server is answered with the
    /// error it deserves (returned here, to write back).
    pub fn receive_text(&self, text: &[u8]) -> Option<SinkReply> {
        // A leading byte order mark is ignored (RFC 8259 §8.1), as everywhere JSON is read.
        let text = crate::wire::jsonrpc::without_bom(text);
        match serde_json::from_slice::<Value>(text) {
            Ok(value) => self.receive(value),
            Err(e) => match unreadable(text) {
                Unreadable::Response(value) => self.receive(value),
                Unreadable::Request(reply, problem) => {
                    self.error(problem);
                    Some(SinkReply::Message(JsonRpcMessage::Response(reply)))
                }
                Unreadable::Skip(problem) => {
                    let shown = String::from_utf8_lossy(&text[..text.len().min(200)]).into_owned();
                    if problem.is_empty() {
                        self.error(format!("skipped a message that is not JSON ({e}): {shown}"));
                    } else {
                        self.error(format!("skipped a message ({problem}): {shown}"));
                    }
                    None
                }
            },
        }
    }

    /// A line of the server's over the transport's `limit` was discarded unread; `line` is what
    /// the decoder's skim of it learned ([`Overlong::verdict`]). It is reported as an error
    /// event, and: a response with a readable id fails the request it answers at once (its
    /// `-32700` stands in for it); a request from the server with a readable id gets its
    /// `-32600` answer (returned here, to write back); anything else is only reported.
    pub fn too_long(&self, line: &Overlong, limit: usize) -> Option<SinkReply> {
        let id = line.id.as_deref().unwrap_or("unreadable");
        self.error(format!(
            "skipped a {}-byte message over the {limit}-byte limit (id {id})",
            line.bytes
        ));
        match line.verdict(limit) {
            OverlongVerdict::StandIn(error) => {
                self.receive(serde_json::from_str(&error.to_json()).unwrap_or(Value::Null))
            }
            OverlongVerdict::Answer(error) if line.has_method && error.id.is_some() => {
                Some(SinkReply::Message(JsonRpcMessage::Response(error)))
            }
            OverlongVerdict::Answer(_) | OverlongVerdict::Skip => None,
        }
    }

    /// Report a non-fatal problem.
    pub fn error(&self, message: impl Into<String>) {
        self.handler.error(message.into());
    }

    /// Report that the transport closed.
    pub fn closed(&self, cause: impl Into<String>) {
        self.handler.closed(cause.into());
    }
}

/// What a client does with message text `serde_json` cannot turn into a value.
#[derive(Debug)]
pub(crate) enum Unreadable {
    /// A response with a readable id: this error response (`-32700`, the message naming the
    /// parser limit) stands in for it, so the pending request fails instead of waiting.
    Response(Value),
    /// A request from the server with a readable id: answer it with this error.
    Request(crate::wire::jsonrpc::JsonRpcResponse, String),
    /// Not JSON (an empty text), or a notification or no readable id (what was wrong): report
    /// and skip.
    Skip(String),
}

/// Classify text that is not a JSON value for the client (see [`Unreadable`]).
pub(crate) fn unreadable(text: &[u8]) -> Unreadable {
    use crate::wire::jsonrpc::{ErrorObject, JsonRpcResponse};
    let invalid = match JsonRpcMessage::from_slice(text) {
        Err(invalid) => invalid,
        Ok(message) => {
            return Unreadable::Skip(format!(
                "a message with an id the client cannot hold: {}",
                message.to_json().chars().take(200).collect::<String>()
            ))
        }
    };
    match (&invalid.id, invalid.is_response(), invalid.response()) {
        (Some(id), true, _) => {
            let error = ErrorObject::parse_error(format!(
                "the server's response could not be read: {}",
                invalid.error.message
            ));
            let stand_in = JsonRpcResponse::error(Some(id.clone()), error);
            Unreadable::Response(serde_json::from_str(&stand_in.to_json()).unwrap_or(Value::Null))
        }
        (Some(_), false, Some(reply)) => Unreadable::Request(
            reply,
            format!(
                "answered a server request the client cannot read: {}",
                invalid.error.message
            ),
        ),
        _ if invalid.is_not_json() => match crate::wire::jsonrpc::leading_message_id(text)
            .and_then(|(id, request)| (!request).then_some(id))
        {
            // A whole response and more on the same line or frame (`{…}{…}`, `{…} x`): its
            // request fails at once, as the server answers such a request, not at its deadline.
            Some(id) => {
                let error = ErrorObject::parse_error(format!(
                    "the server's response could not be read: more text follows it ({})",
                    invalid.error.message
                ));
                let stand_in = JsonRpcResponse::error(Some(id), error);
                Unreadable::Response(
                    serde_json::from_str(&stand_in.to_json()).unwrap_or(Value::Null),
                )
            }
            None => Unreadable::Skip(String::new()),
        },
        _ => Unreadable::Skip(invalid.error.message.clone()),
    }
}

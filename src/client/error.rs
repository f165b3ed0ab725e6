//! The client's error type.

use crate::protocol::trace::ErrorType;
use crate::protocol::ToolResult;
use crate::wire::jsonrpc::{ErrorCode, ErrorObject};

/// Why a client operation failed.
///
/// `Clone` so one transport failure can fail every pending request with the same cause; `Send +
/// Sync` so it crosses tasks. The set of variants does not change with features.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// No response arrived within the request's deadline (seed clause 14, `timed out`); a
    /// `notifications/cancelled` was sent and a late reply is ignored.
    #[error("MCP request {method} timed out after {timeout_ms} ms")]
    Timeout {
        /// The request's method.
        method: String,
        /// The deadline that passed, in milliseconds.
        timeout_ms: u64,
    },
    /// The server answered with a JSON-RPC error (seed: `MCP error <code>: <message>`); the code
    /// and `data` are kept.
    #[error("{0}")]
    Rpc(ErrorObject),
    /// The tool ran and reported failure (`isError: true`); the message is the result's text
    /// (seed clause 13: `call` throws an `Error` carrying the text). The whole result is kept.
    #[error("{message}")]
    Tool {
        /// The concatenated text blocks of the result (with none, that the tool failed
        /// without any).
        message: String,
        /// The whole `tools/call` result.
        result: ToolResult,
    },
    /// The transport closed (the server process exited, the socket closed, a write failed, or
    /// the client disconnected): every pending request fails with this at once.
    #[error("MCP transport closed: {cause}")]
    TransportClosed {
        /// What closed it, with any detail the transport has (exit status, stderr tail).
        cause: String,
    },
    /// One exchange failed without closing the transport (an HTTP status, a broken connection,
    /// an HTTP timeout; a refused one is [`ClientError::ConnectionRefused`]); only the request
    /// it carried fails.
    #[error("MCP transport error: {0}")]
    Transport(String),
    /// The server's address refused the connection (nothing was sent): no server listens
    /// there. The same over Streamable HTTP and WebSocket; only the request that tried fails.
    #[error("connection refused: {addr}")]
    ConnectionRefused {
        /// The `host:port` the connection was aimed at (the URL's, the scheme's default port
        /// when it names none).
        addr: String,
    },
    /// A 2026-07-28 HTTP exchange got a non-2xx status (sent through
    /// [`ClientTransport::send_modern`](crate::client::ClientTransport::send_modern)); the
    /// JSON-RPC error of its body, when it had one. The auto-mode probe reads the status ([versioning](https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning)).
    #[error("MCP transport error: {detail}")]
    HttpStatus {
        /// The HTTP status code.
        status: u16,
        /// The body's JSON-RPC error, if any.
        error: Option<ErrorObject>,
        /// The status line and the body's error message or text (`HTTP 401 Unauthorized: …`).
        detail: String,
    },
    /// The server no longer knows our session (Streamable HTTP: a `404` to a request that
    /// carried `mcp-session-id`, spec `basic/transports` Session Management, or a `400` that
    /// says so). Reconnect (`disconnect` then `connect`) to start a new session.
    #[error("MCP session {session} expired (the server no longer knows it); reconnect to start a new session")]
    SessionExpired {
        /// The session id the server rejected.
        session: String,
    },
    /// The response to our request was not a valid JSON-RPC response (both or neither of
    /// `result` and `error`, a bad `error` object) or its `result` had the wrong shape.
    #[error("invalid MCP response: {0}")]
    InvalidResponse(String),
    /// The server answered `initialize` with a protocol version this crate does not support
    /// (spec `basic/lifecycle`, Version Negotiation: the client SHOULD disconnect).
    #[error(
        "the server chose MCP protocol version {version:?}, which this client does not support (supported: {supported})"
    )]
    UnsupportedVersion {
        /// The version the server answered.
        version: String,
        /// The supported versions, comma-separated.
        supported: String,
    },
    /// The caller's arguments cannot be sent (e.g. tool arguments that are not a JSON object);
    /// nothing was sent.
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// A request was made before `connect` or after `disconnect`.
    #[error("the MCP client is not connected")]
    NotConnected,
    /// The request needs a capability that was not declared — by the server (its `initialize`
    /// result or `server/discover`), or by this client for a notification it would send (spec
    /// `basic/lifecycle`, Capability Negotiation: both sides respect what was negotiated);
    /// nothing was sent.
    #[error("{method} needs the `{capability}` capability, which the {side} did not declare")]
    NotDeclared {
        /// The method or notification that was not sent.
        method: String,
        /// The capability path, e.g. `resources.subscribe`.
        capability: String,
        /// Who did not declare it: `"server"` or `"client"`.
        side: &'static str,
    },
    /// The request was not sent: `limit` requests are already waiting for an answer
    /// ([`ClientOptions::max_pending`](super::ClientOptions::max_pending)).
    #[error("{limit} requests are already waiting for the server's answer; this one was not sent")]
    TooManyPending {
        /// The bound that was reached.
        limit: usize,
    },
    /// A skill file's content is not what the held skill entry describes (its size, digest or
    /// frontmatter differ, or it is not listed): the content was refused (Skills extension,
    /// [SEP-2640](https://modelcontextprotocol.io/seps/2640-skills-extension) Integrity and
    /// Verification).
    #[error("skill verification failed: {0}")]
    Skill(super::skills::SkillVerificationError),
}

impl ClientError {
    /// The JSON-RPC error code, for [`ClientError::Rpc`] (and a [`ClientError::HttpStatus`]
    /// whose body carried one).
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            ClientError::Rpc(e) => Some(e.code),
            ClientError::HttpStatus { error: Some(e), .. } => Some(e.code),
            _ => None,
        }
    }

    /// Whether the deadline passed.
    pub fn is_timeout(&self) -> bool {
        matches!(self, ClientError::Timeout { .. })
    }

    /// Whether the transport closed (the client is then disconnected).
    pub fn is_closed(&self) -> bool {
        matches!(self, ClientError::TransportClosed { .. })
    }

    /// Whether the HTTP session expired.
    pub fn is_session_expired(&self) -> bool {
        matches!(self, ClientError::SessionExpired { .. })
    }

    /// `error.type` of a request that failed so (MCP semantic conventions): the JSON-RPC code
    /// when there is one, else a low-cardinality name of the failure.
    pub(crate) fn error_type(&self) -> ErrorType {
        if let Some(code) = self.code() {
            return ErrorType::Code(code.0);
        }
        ErrorType::Named(match self {
            ClientError::Timeout { .. } => "timeout",
            ClientError::Rpc(_) => "rpc_error",
            ClientError::Tool { .. } => "tool_error",
            ClientError::TransportClosed { .. } => "transport_closed",
            ClientError::Transport(_) => "transport_error",
            ClientError::ConnectionRefused { .. } => "connection_refused",
            ClientError::HttpStatus { .. } => "http_error",
            ClientError::SessionExpired { .. } => "session_expired",
            ClientError::InvalidResponse(_) => "invalid_response",
            ClientError::UnsupportedVersion { .. } => "unsupported_version",
            ClientError::InvalidArguments(_) => "invalid_arguments",
            ClientError::NotConnected => "not_connected",
            ClientError::NotDeclared { .. } => "not_declared",
            ClientError::TooManyPending { .. } => "too_many_pending",
            ClientError::Skill(_) => "skill_verification",
        })
    }

    /// Build a [`ClientError::TransportClosed`].
    pub fn closed(cause: impl Into<String>) -> Self {
        ClientError::TransportClosed {
            cause: cause.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_send_sync_and_display_well() {
        fn assert_send_sync<T: Send + Sync + 'static>() {}
        assert_send_sync::<ClientError>();
        let rpc = ClientError::Rpc(ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "nope"));
        assert_eq!(rpc.to_string(), "MCP error -32601: nope");
        assert_eq!(rpc.code(), Some(ErrorCode::METHOD_NOT_FOUND));
        assert!(ClientError::closed("x").is_closed());
        let refused = ClientError::ConnectionRefused {
            addr: "127.0.0.1:1".into(),
        };
        assert_eq!(refused.to_string(), "connection refused: 127.0.0.1:1");
    }
}

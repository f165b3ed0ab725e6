//! Error codes and error objects: [`ErrorCode`] (JSON-RPC 2.0's reserved codes and MCP's, one
//! home for every code this crate sends) and [`ErrorObject`], a failed response's `error`.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A JSON-RPC error code: a newtype over `i32` with the reserved codes as constants.
///
/// Source: JSON-RPC 2.0 §5.1 and the seed's `JSONRPC_*` constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// `-32700`: invalid JSON was received (the message did not parse).
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// `-32600`: the payload was not a valid request object.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// `-32601`: the requested method does not exist or is not available.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// `-32602`: the method's parameters were invalid.
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// `-32603`: an internal JSON-RPC error.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// `-32000`: an implementation-defined server error.
    pub const SERVER_ERROR: ErrorCode = ErrorCode(-32000);

    // MCP's codes, in the implementation-defined server-error range.

    /// `-32001`: the request timed out (the TypeScript SDK's `ErrorCode.RequestTimeout`, which
    /// the JS client's errors carry).
    pub const REQUEST_TIMEOUT: ErrorCode = ErrorCode(-32001);
    /// `-32002`: the handshake era's "Resource not found" (2026-07-28 answers `-32602`; spec
    /// [`server/resources`](https://modelcontextprotocol.io/specification/2025-11-25/server/resources#error-handling)).
    pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);
    /// `-32020` HeaderMismatch (2026-07-28): a required header is missing, differs from the
    /// body, or is malformed
    /// ([Streamable HTTP](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http)).
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// `-32021` MissingRequiredClientCapability (2026-07-28; `data.requiredCapabilities` is an
    /// object).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// `-32022` UnsupportedProtocolVersion (2026-07-28; `data.supported`, `data.requested`).
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);
    /// `-32800` RequestCancelled (the JSON-RPC convention of LSP and ACP; MCP defines no code):
    /// what a Streamable HTTP `POST` answered with JSON gets when its request was cancelled by
    /// `notifications/cancelled` — the transport still owes that `POST` one JSON object, while
    /// on stdio, WebSocket and SSE a cancelled request gets nothing (spec
    /// [cancellation](https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation)).
    pub const REQUEST_CANCELLED: ErrorCode = ErrorCode(-32800);
    /// `-32099`: the marker a handler's input request returns while its input is missing; the
    /// server turns the round into an input-required result. Never sent on the wire.
    pub(crate) const INPUT_REQUIRED: ErrorCode = ErrorCode(-32099);

    /// The code as a plain integer.
    pub const fn as_i32(self) -> i32 {
        self.0
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// `-32700` (seed `JSONRPC_PARSE_ERROR`).
pub const JSONRPC_PARSE_ERROR: i32 = ErrorCode::PARSE_ERROR.0;
/// `-32600` (seed `JSONRPC_INVALID_REQUEST`).
pub const JSONRPC_INVALID_REQUEST: i32 = ErrorCode::INVALID_REQUEST.0;
/// `-32601` (seed `JSONRPC_METHOD_NOT_FOUND`).
pub const JSONRPC_METHOD_NOT_FOUND: i32 = ErrorCode::METHOD_NOT_FOUND.0;
/// `-32602` (seed `JSONRPC_INVALID_PARAMS`).
pub const JSONRPC_INVALID_PARAMS: i32 = ErrorCode::INVALID_PARAMS.0;
/// `-32603` (JSON-RPC 2.0 internal error).
pub const JSONRPC_INTERNAL_ERROR: i32 = ErrorCode::INTERNAL_ERROR.0;
/// `-32000` (seed `JSONRPC_SERVER_ERROR`).
pub const JSONRPC_SERVER_ERROR: i32 = ErrorCode::SERVER_ERROR.0;

/// The `error` member of a failed response: `{ code, message, data? }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code (see [`ErrorCode`]).
    pub code: ErrorCode,
    /// A short description.
    pub message: String,
    /// Optional extra information.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// The longest error message [`ErrorObject::new`] keeps whole: 4 KiB.
pub const MAX_ERROR_MESSAGE_BYTES: usize = 4 * 1024;

impl ErrorObject {
    /// An error with a code and a message and no `data`. A message over
    /// [`MAX_ERROR_MESSAGE_BYTES`] is cut there (at a character boundary) and says so: messages
    /// often name what the peer sent (a method, a tool, a URI), and an answer never grows with
    /// it ([JSON-RPC 2.0 §5.1](https://www.jsonrpc.org/specification#error_object): the message
    /// SHOULD be a concise single sentence; details go in `data`).
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        let mut message = message.into();
        if message.len() > MAX_ERROR_MESSAGE_BYTES {
            let total = message.len();
            let mut end = MAX_ERROR_MESSAGE_BYTES;
            while !message.is_char_boundary(end) {
                end -= 1;
            }
            message.truncate(end);
            message.push_str(&format!("… (cut; {total} bytes)"));
        }
        ErrorObject {
            code,
            message,
            data: None,
        }
    }

    /// Read `{ code, message, data? }` from a JSON value: `code` an integer in `i32`, `message` a
    /// string; other members are ignored. By hand rather than serde, which keeps the wasm build
    /// free of serde's type-mismatch error formatting.
    pub fn from_value(value: Value) -> Option<ErrorObject> {
        let Value::Object(mut map) = value else {
            return None;
        };
        let code = i32::try_from(map.get("code")?.as_i64()?).ok()?;
        let Some(Value::String(message)) = map.remove("message") else {
            return None;
        };
        Some(ErrorObject {
            code: ErrorCode(code),
            message,
            data: map.remove("data"),
        })
    }

    /// Attach `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// `-32700 Parse error`.
    pub fn parse_error(detail: impl fmt::Display) -> Self {
        Self::new(ErrorCode::PARSE_ERROR, format!("Parse error: {detail}"))
    }

    /// `-32600 Invalid Request`, with what was wrong.
    pub fn invalid_request(detail: impl fmt::Display) -> Self {
        Self::new(
            ErrorCode::INVALID_REQUEST,
            format!("Invalid Request: {detail}"),
        )
    }

    /// `-32601 Method not found`, naming the method.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }

    /// `-32602 Invalid params`, with what was wrong.
    pub fn invalid_params(detail: impl fmt::Display) -> Self {
        Self::new(
            ErrorCode::INVALID_PARAMS,
            format!("Invalid params: {detail}"),
        )
    }

    /// `-32603 Internal error`, with what went wrong.
    pub fn internal(detail: impl fmt::Display) -> Self {
        Self::new(
            ErrorCode::INTERNAL_ERROR,
            format!("Internal error: {detail}"),
        )
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MCP error {}: {}", self.code, self.message)
    }
}

impl std::error::Error for ErrorObject {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_naming_a_huge_peer_string_is_cut() {
        let method = "é".repeat(100_000);
        let error = ErrorObject::method_not_found(&method);
        assert!(error.message.starts_with("Method not found: éé"));
        assert!(
            error
                .message
                .ends_with(&format!("… (cut; {} bytes)", 18 + method.len())),
            "{}",
            &error.message[error.message.len() - 40..]
        );
        assert!(error.message.len() <= MAX_ERROR_MESSAGE_BYTES + 40);
        // A short one is kept whole.
        assert_eq!(
            ErrorObject::method_not_found("nope").message,
            "Method not found: nope"
        );
    }
}

//! The seed's total guards and builders, over already-parsed values.

use std::borrow::Cow;

use serde_json::Value;

use super::{ErrorCode, ErrorObject, JsonRpcMessage, JsonRpcResponse, RequestId};

/// Total guard: a valid request id — a string or an integer in `i64` (seed `isRequestId`;
/// `null` is valid only on a response).
pub fn is_request_id(value: &Value) -> bool {
    RequestId::from_value(value).is_some()
}

/// Total guard: a request or a notification (seed `isJSONRPCRequest`: `jsonrpc: "2.0"`, a string
/// `method`, an absent or valid `id`, `params` absent or an object).
pub fn is_jsonrpc_request(value: &Value) -> bool {
    matches!(
        parse_jsonrpc_message(value),
        Some(JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_))
    )
}

/// Total guard: a response with an `id` (string, integer or `null`) and exactly one of
/// `result` / `error` (seed `isJSONRPCResponse`).
pub fn is_jsonrpc_response(value: &Value) -> bool {
    matches!(
        parse_jsonrpc_message(value),
        Some(JsonRpcMessage::Response(_))
    )
}

/// Total guard: the union of [`is_jsonrpc_request`] and [`is_jsonrpc_response`]
/// (seed `isJSONRPCMessage`).
pub fn is_jsonrpc_message(value: &Value) -> bool {
    parse_jsonrpc_message(value).is_some()
}

/// Total guard: a request (with an id) whose method is `initialize` (seed `isInitializeRequest`).
pub fn is_initialize_request(value: &Value) -> bool {
    matches!(parse_jsonrpc_message(value), Some(JsonRpcMessage::Request(r)) if r.method == "initialize")
}

/// Narrow an already-parsed value to a message, or `None` (seed `parseJSONRPCMessage`; total and
/// sound with [`is_jsonrpc_message`]). Use [`JsonRpcMessage::from_value`] to learn why it failed.
pub fn parse_jsonrpc_message(value: &Value) -> Option<JsonRpcMessage> {
    JsonRpcMessage::from_value(value.clone()).ok()
}

/// Build a success response (seed `jsonRPCResult`).
pub fn jsonrpc_result(id: RequestId, result: Value) -> JsonRpcResponse {
    JsonRpcResponse::result(id, result)
}

/// Build an error response (seed `jsonRPCError`): `id` (`None` for `null`), code, message, data.
pub fn jsonrpc_error(
    id: Option<RequestId>,
    code: i32,
    message: impl Into<Cow<'static, str>>,
    data: Option<Value>,
) -> JsonRpcResponse {
    JsonRpcResponse::error(
        id,
        ErrorObject {
            code: ErrorCode(code),
            message: message.into().into_owned(),
            data,
        },
    )
}
